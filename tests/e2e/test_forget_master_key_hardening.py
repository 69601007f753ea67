"""MIND_MASTER_KEY set on a mind made without one: one `Error:` line, the key store untouched
(so the mind still records without the key), and a key that will not unwrap is never a
traceback. On SQLite and, with MIND_TEST_POSTGRES_DSN, on PostgreSQL."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mindledger.adapters.key_store import KeyStoreError, SQLiteKeyStore
from tests.conftest import Result
from tests.integration.backends import POSTGRES_DSN, needs_postgres, postgres_schema

Cli = Callable[..., Result]
MASTER = base64.b64encode(b"m" * 32).decode()
OTHER = base64.b64encode(b"o" * 32).decode()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def made_without_a_master_key(
    request: pytest.FixtureRequest, cli: Cli, home: Path
) -> Iterator[str]:
    """A mind just initialised with no MIND_MASTER_KEY: no data key yet, but its per-mind
    secrets are stored (unwrapped)."""
    kind: str = request.param
    if kind == "sqlite":
        assert cli("init", "--name", "Echo").exit_code == 0
        yield kind
        return
    with postgres_schema() as schema:
        made = cli("init", "--name", "Echo", "--postgres", POSTGRES_DSN, "--schema", schema)
        assert made.exit_code == 0, made.stderr
        yield kind


def one_error_line(result: Result, fragment: str) -> None:
    assert result.exit_code == 1, result.output + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert fragment in lines[0], lines[0]
    assert MASTER not in result.stderr


@pytest.mark.parametrize(
    "args", [["commit", "Call the bank"], ["concept", "define", "garden.hedge", "The hedge"]]
)
def test_a_master_key_on_a_mind_made_without_one_is_refused_and_changes_nothing(
    cli: Cli, made_without_a_master_key: str, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    head = cli("status", "--json").json()["head"]
    monkeypatch.setenv("MIND_MASTER_KEY", MASTER)

    refused = cli(*args)
    monkeypatch.delenv("MIND_MASTER_KEY")
    after = cli("commit", "Call the bank")

    one_error_line(refused, "made without MIND_MASTER_KEY")
    assert "wrapping an existing store is not supported" in refused.stderr
    assert after.exit_code == 0, after.stderr  # the store was not locked by the refused key
    assert cli("status", "--json").json()["head"]["position"] == head["position"] + 1


def test_an_empty_key_store_still_takes_the_master_key_it_is_first_used_with(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_MASTER_KEY", MASTER)

    made = cli("init", "--name", "Echo")
    committed = cli("commit", "Water the ferns")
    monkeypatch.delenv("MIND_MASTER_KEY")
    without = cli("log")

    assert made.exit_code == 0 and committed.exit_code == 0, made.stderr + committed.stderr
    one_error_line(without, "set MIND_MASTER_KEY")


def test_a_stored_key_that_will_not_unwrap_is_a_key_store_error_not_a_traceback(
    tmp_path: Path,
) -> None:
    path = tmp_path / "keys.sqlite"
    store = SQLiteKeyStore(path, base64.b64decode(MASTER))
    store.add({b"i" * 16: b"k" * 32})
    store.flush()
    secret = store.secret("content")
    store.close()
    # What a store damaged by the old first-use check holds: a check value for one key, rows
    # wrapped (or not wrapped) under another.
    import sqlite3

    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE keys SET key = ?", (b"x" * 60,))
        con.execute("UPDATE meta SET value = ? WHERE name = 'secret:content'", (b"y" * 32,))
    con.close()
    reopened = SQLiteKeyStore(path, base64.b64decode(MASTER))

    with pytest.raises(KeyStoreError, match="cannot be opened with MIND_MASTER_KEY"):
        reopened.get([b"i" * 16])
    with pytest.raises(KeyStoreError, match="cannot be opened with MIND_MASTER_KEY"):
        reopened.secret("content")
    reopened.close()
    assert len(secret) == 32
