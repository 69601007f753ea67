"""The eventsourcing library's own recorder test cases, run against our chained recorders on
SQLite and PostgreSQL (PostgreSQL with MIND_TEST_POSTGRES_DSN), each case followed by a check
that the hash chain covers every stored event exactly once and verifies.

Run: the application recorder case (`ApplicationRecorderTestCase`; on PostgreSQL with its
optional subscription case, which the library's SQLite recorder does not support), the aggregate
recorder case (`AggregateRecorderTestCase`: our recorder is the mind's event store's recorder),
the non-interleaving notification ids case (`NonInterleavingNotificationIDsBaseCase`), and the
factory case for what a mind builds (`InfrastructureFactoryTestCase`: the mapper, the
application recorder). All with the library's UUID originator ids, the only kind the chain
records (ORIGINATOR_ID_TYPE=text is refused at start).

Left out, and why:
- `test_performance` and `test_concurrent_throughput`: they print a rate and assert nothing
  about behaviour (bench/ measures ours).
- `TrackingRecorderTestCase`, `ProcessRecorderTestCase`, the factory's `test_create_tracking_
  recorder`, `test_create_process_recorder` and `test_create_aggregate_recorder`: a mind builds
  no tracking, process or separate aggregate recorder (its read models keep their positions in
  DuckDB; the aggregate recorder would only hold snapshots, refused with IS_SNAPSHOTTING_ENABLED).
- The factory's cipher and compressor cases (`test_mapper_with_cipher`, `..._compressor`,
  `..._cipher_and_compressor`, `..._wrong_cipher_key`): events are sealed by our mapper with the
  key store, and CIPHER_TOPIC, CIPHER_KEY and COMPRESSOR_TOPIC are refused at start
  (tests/integration/test_library_settings.py).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import TestCase
from uuid import UUID

import pytest
from eventsourcing.persistence import AggregateRecorder, StoredEvent
from eventsourcing.sqlite import SQLiteDatastore
from eventsourcing.tests.persistence import (
    AggregateRecorderTestCase,
    ApplicationRecorderTestCase,
    InfrastructureFactoryTestCase,
    NonInterleavingNotificationIDsBaseCase,
)
from eventsourcing.utils import Environment

from mindledger.adapters.sqlite_ledger import (
    ChainedSQLiteRecorder,
    LedgerSQLiteFactory,
    SQLiteLedgerReader,
)
from mindledger.adapters.verification import verify_ledger
from tests.integration.backends import POSTGRES_DSN, needs_postgres, postgres_schema


def assert_chain_covers_every_event_once(recorder: Any, reader: Any) -> None:
    """Every stored event has exactly one chain entry, no entry lacks its event, and the chain
    verifies."""
    notifications = recorder.select_notifications(start=None, limit=10**7)
    stored = Counter((UUID(str(n.originator_id)).hex, n.originator_version) for n in notifications)
    chained = Counter((row.originator_id, row.version) for row in reader.rows())
    assert reader.orphans() == []
    assert chained == stored
    assert set(chained.values()) <= {1}
    result = verify_ledger(reader)
    assert result.ok, result
    assert result.events == len(notifications)


class AsAggregateRecorder(AggregateRecorder):
    """Our application recorder as the library's aggregate case sees an aggregate recorder: its
    `insert_events` returns None there (a plain aggregate recorder issues no notification ids);
    everything else is our recorder's, unchanged."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder

    def insert_events(self, stored_events: Any, **kwargs: Any) -> None:
        self.recorder.insert_events(stored_events, **kwargs)

    def select_events(self, originator_id: Any, **kwargs: Any) -> list[StoredEvent]:
        return list(self.recorder.select_events(originator_id, **kwargs))


class ChainCoversEveryEvent(TestCase):
    """Mixed in first: after each library case, the chain over what it wrote is checked."""

    chained: Any = None

    def tearDown(self) -> None:
        if self.chained is not None:
            reader = self.make_reader()
            try:
                assert_chain_covers_every_event_once(self.chained, reader)
            finally:
                reader.conn.close()
        super().tearDown()

    def chained_recorder(self) -> Any:
        raise NotImplementedError

    def make_reader(self) -> Any:
        raise NotImplementedError


class OnSQLite(ChainCoversEveryEvent):
    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.path = Path(self.folder.name) / "ledger.sqlite"
        super().setUp()

    def tearDown(self) -> None:
        try:
            super().tearDown()
        finally:
            self.folder.cleanup()

    def chained_recorder(self) -> ChainedSQLiteRecorder:
        recorder = ChainedSQLiteRecorder(SQLiteDatastore(str(self.path)))
        recorder.create_table()
        self.chained = recorder
        return recorder

    def make_reader(self) -> Any:
        return SQLiteLedgerReader(self.path)


class OnPostgres(ChainCoversEveryEvent):
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

    def chained_recorder(self) -> Any:
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
        self.chained = recorder
        return recorder

    def make_reader(self) -> Any:
        from mindledger.adapters.postgres_ledger import PostgresLedgerReader

        return PostgresLedgerReader(self.env())


class ApplicationCase(ApplicationRecorderTestCase[Any]):
    __test__ = False  # the backend's subclass runs it

    def create_recorder(self) -> Any:
        return self.chained_recorder()  # type: ignore[attr-defined]

    def test_concurrent_throughput(self) -> None:
        pytest.skip("a throughput print, not a behaviour; see bench/")

    def test_performance(self) -> None:
        pytest.skip("a timing print, not a behaviour; see bench/")


class AggregateCase(AggregateRecorderTestCase):
    __test__ = False

    def create_recorder(self) -> AggregateRecorder:
        return AsAggregateRecorder(self.chained_recorder())  # type: ignore[attr-defined]

    def test_performance(self) -> None:
        pytest.skip("a timing print, not a behaviour; see bench/")


class NonInterleavingCase(NonInterleavingNotificationIDsBaseCase):
    __test__ = False

    def create_recorder(self) -> Any:
        return self.chained_recorder()  # type: ignore[attr-defined]


class TestChainedSQLiteRecorder(OnSQLite, ApplicationCase):
    __test__ = True


class TestChainedSQLiteRecorderAsAggregateRecorder(OnSQLite, AggregateCase):
    __test__ = True


class TestChainedSQLiteRecorderNonInterleaving(OnSQLite, NonInterleavingCase):
    __test__ = True


@needs_postgres
class TestChainedPostgresRecorder(OnPostgres, ApplicationCase):
    __test__ = True

    def test_insert_subscribe(self) -> None:
        # The library's optional case; its SQLite recorder has no subscriptions (LISTEN/NOTIFY
        # here: our readers wait on the same channel).
        self.optional_test_insert_subscribe()


@needs_postgres
class TestChainedPostgresRecorderAsAggregateRecorder(OnPostgres, AggregateCase):
    __test__ = True


@needs_postgres
class TestChainedPostgresRecorderNonInterleaving(OnPostgres, NonInterleavingCase):
    __test__ = True


class FactoryCase(InfrastructureFactoryTestCase[Any]):
    """What a mind builds from its factory: the mapper (ours: no library cipher or compressor)
    and the chained application recorder."""

    __test__ = False

    def expected_aggregate_recorder_class(self) -> Any:
        raise NotImplementedError  # not built by a mind (see the module docstring)

    def expected_tracking_recorder_class(self) -> Any:
        raise NotImplementedError

    def tracking_recorder_subclass(self) -> Any:
        raise NotImplementedError

    def expected_process_recorder_class(self) -> Any:
        raise NotImplementedError

    def test_mapper_with_cipher(self) -> None:
        pytest.skip("CIPHER_TOPIC and CIPHER_KEY are refused at start; events are sealed by ours")

    def test_mapper_with_compressor(self) -> None:
        pytest.skip("COMPRESSOR_TOPIC is refused at start: the chain covers canonical JSON")

    def test_mapper_with_cipher_and_compressor(self) -> None:
        pytest.skip("CIPHER_TOPIC and COMPRESSOR_TOPIC are refused at start")

    def test_mapper_with_wrong_cipher_key(self) -> None:
        pytest.skip("CIPHER_KEY is refused at start; sealing keys live in the key store")

    def test_create_aggregate_recorder(self) -> None:
        pytest.skip("a mind builds no separate aggregate recorder (snapshots are refused)")

    def test_create_tracking_recorder(self) -> None:
        pytest.skip("a mind builds no tracking recorder (read models track in DuckDB)")

    def test_create_process_recorder(self) -> None:
        pytest.skip("a mind builds no process recorder")


class TestLedgerSQLiteFactory(FactoryCase):
    __test__ = True

    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.env = Environment(
            "mind",
            {
                "PERSISTENCE_MODULE": "mindledger.adapters.sqlite_ledger:LedgerSQLiteFactory",
                "SQLITE_DBNAME": str(Path(self.folder.name) / "ledger.sqlite"),
                "LEDGER_KEY_STORE": str(Path(self.folder.name) / "keys.sqlite"),
            },
        )
        super().setUp()

    def tearDown(self) -> None:
        super().tearDown()
        self.folder.cleanup()

    def expected_factory_class(self) -> Any:
        return LedgerSQLiteFactory

    def expected_application_recorder_class(self) -> Any:
        return ChainedSQLiteRecorder


@needs_postgres
class TestLedgerPostgresFactory(FactoryCase):
    __test__ = True

    def setUp(self) -> None:
        from mindledger.adapters.postgres_ledger import postgres_env

        self.schema_cm = postgres_schema()
        schema = self.schema_cm.__enter__()
        self.env = Environment(
            "mind", {**postgres_env(POSTGRES_DSN, schema), "LEDGER_KEY_STORE": "postgres"}
        )
        super().setUp()

    def tearDown(self) -> None:
        try:
            super().tearDown()
        finally:
            self.schema_cm.__exit__(None, None, None)

    def expected_factory_class(self) -> Any:
        from mindledger.adapters.postgres_ledger import LedgerPostgresFactory

        return LedgerPostgresFactory

    def expected_application_recorder_class(self) -> Any:
        from mindledger.adapters.postgres_ledger import ChainedPostgresRecorder

        return ChainedPostgresRecorder
