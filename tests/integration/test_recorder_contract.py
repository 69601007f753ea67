"""The eventsourcing library's own recorder contract, run against our chained recorders."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.sqlite import SQLiteDatastore
from eventsourcing.tests.persistence import ApplicationRecorderTestCase

from mindledger.adapters.sqlite_ledger import ChainedSQLiteRecorder, SQLiteLedgerReader
from mindledger.adapters.verification import verify_ledger
from tests.integration.backends import POSTGRES_DSN, needs_postgres, postgres_schema


class ChainIntactAfterEachCase:
    """After every library case, our hash chain over what it wrote must verify."""

    created = False

    def tearDown(self) -> None:
        if self.created:
            reader = self.make_reader()
            result = verify_ledger(reader)
            assert result.ok, result
        super().tearDown()  # type: ignore[misc]

    def make_reader(self) -> Any:
        raise NotImplementedError


class TestChainedSQLiteRecorder(
    ChainIntactAfterEachCase, ApplicationRecorderTestCase[ChainedSQLiteRecorder]
):
    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.path = Path(self.folder.name) / "ledger.sqlite"
        super().setUp()

    def create_recorder(self) -> ChainedSQLiteRecorder:
        recorder = ChainedSQLiteRecorder(SQLiteDatastore(str(self.path)))
        recorder.create_table()
        self.created = True
        return recorder

    def make_reader(self) -> Any:
        return SQLiteLedgerReader(self.path)

    def test_concurrent_throughput(self) -> None:
        pytest.skip("a throughput print, not a behaviour; see bench/")

    def test_performance(self) -> None:
        pytest.skip("a timing print, not a behaviour; see bench/")


@needs_postgres
class TestChainedPostgresRecorder(ChainIntactAfterEachCase, ApplicationRecorderTestCase[Any]):
    def setUp(self) -> None:
        self.schema_cm = postgres_schema()
        self.schema = self.schema_cm.__enter__()
        super().setUp()

    def tearDown(self) -> None:
        try:
            super().tearDown()
        finally:
            self.schema_cm.__exit__(None, None, None)

    def env(self) -> dict[str, str]:
        from mindledger.adapters.postgres_ledger import postgres_env

        return postgres_env(POSTGRES_DSN, self.schema)

    def create_recorder(self) -> Any:
        from eventsourcing.postgres import PostgresDatastore

        from mindledger.adapters.postgres_ledger import ChainedPostgresRecorder

        env = self.env()
        datastore = PostgresDatastore(
            env["POSTGRES_DBNAME"],
            env["POSTGRES_HOST"],
            env["POSTGRES_PORT"],
            env["POSTGRES_USER"],
            env["POSTGRES_PASSWORD"],
            schema=self.schema,
            pool_size=4,
            max_overflow=10,
        )
        recorder = ChainedPostgresRecorder(datastore)
        recorder.create_table()
        self.created = True
        return recorder

    def make_reader(self) -> Any:
        from mindledger.adapters.postgres_ledger import PostgresLedgerReader

        return PostgresLedgerReader(self.env())

    def test_concurrent_throughput(self) -> None:
        pytest.skip("a throughput print, not a behaviour; see bench/")

    def test_performance(self) -> None:
        pytest.skip("a timing print, not a behaviour; see bench/")
