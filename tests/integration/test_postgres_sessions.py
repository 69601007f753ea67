"""A session PostgreSQL ends (a restart, a failover, an administrator) is opened again by the
ledger reader and the key store at their next use: a warm `mind serve` keeps both for its
whole life, and answered 500 to the first request after a restart before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mindledger.adapters.postgres_keys import PostgresKeyStore
from mindledger.adapters.postgres_ledger import PostgresLedgerReader
from mindledger.compose import Home, open_reader, persistence_env
from tests.integration.backends import POSTGRES_DSN, mind_with_a_commitment, needs_postgres

pytestmark = [pytest.mark.postgres, needs_postgres]


def end_session(backend_pid: int) -> None:
    import psycopg

    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (backend_pid,))


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Home]:
    monkeypatch.delenv("MIND_BACKEND", raising=False)
    monkeypatch.delenv("MIND_NOW", raising=False)
    with mind_with_a_commitment("postgres", tmp_path / "mind") as h:
        yield h


def test_the_ledger_reader_reads_on_after_its_session_is_ended(home: Home) -> None:
    reader = open_reader(home)
    assert isinstance(reader, PostgresLedgerReader)
    head = reader.head()
    end_session(reader.conn.info.backend_pid)

    again = reader.head()
    reader.wait(0.01)  # the follower's LISTEN, on the new session

    assert again == head and head[0] == 2
    reader.close()


def test_the_key_store_stores_and_fetches_on_after_its_session_is_ended(home: Home) -> None:
    store = PostgresKeyStore(persistence_env(home))
    store.add({b"a" * 16: b"x" * 32})
    store.flush()
    assert store._con is not None
    end_session(store._con.info.backend_pid)

    store.add({b"b" * 16: b"y" * 32})
    store.flush()
    fresh = PostgresKeyStore(persistence_env(home))
    fetched = fresh.get([b"a" * 16, b"b" * 16])

    assert fetched == {b"a" * 16: b"x" * 32, b"b" * 16: b"y" * 32}
    assert fresh._con is not None
    end_session(fresh._con.info.backend_pid)
    assert fresh.pending_forgets() == []
    store.close()
    fresh.close()
