"""An append that fails at any point writes nothing, on SQLite and on PostgreSQL.

Each case injects one failure into a real append (a command recording a commitment) at one
point of the recorder's work, then checks that the events and the chain are as before, that
`mind verify` (the floor's) still passes, and that the same command then succeeds: a refusal
left no half-written append behind (on PostgreSQL the library's own `insert_events` once
committed events whose chain check had refused them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.sqlite import SQLiteCursor

import mindledger
from mindledger.adapters import postgres_ledger, sqlite_ledger
from mindledger.adapters.head_anchor import AnchoredRecorder, HeadAnchorFile
from mindledger.compose import Home, open_mind
from tests.integration.backends import BACKENDS, mind_with_a_commitment


class InjectedError(Exception):
    """Raised by a test where it breaks an append on purpose."""


@pytest.fixture(params=BACKENDS)
def home(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Home]:
    monkeypatch.delenv("MIND_BACKEND", raising=False)
    monkeypatch.delenv("MIND_NOW", raising=False)
    with mind_with_a_commitment(request.param, tmp_path / "mind") as h:
        yield h


def stored(home: Home) -> tuple[int, int]:
    """(event rows, chain rows) as the database holds them."""
    if home.backend() == "sqlite":
        with sqlite3.connect(home.ledger) as conn:
            events = conn.execute("SELECT count(*) FROM stored_events").fetchone()[0]
            chain = conn.execute("SELECT count(*) FROM ledger_chain").fetchone()[0]
        return events, chain
    import psycopg

    settings = home.settings
    assert settings.postgres_dsn is not None
    schema = settings.postgres_schema
    with psycopg.connect(settings.postgres_dsn.get_secret_value()) as conn:
        events = conn.execute(f'SELECT count(*) FROM "{schema}".mind_events').fetchone()
        chain = conn.execute(f'SELECT count(*) FROM "{schema}".ledger_chain').fetchone()
    assert events is not None and chain is not None
    return events[0], chain[0]


def raise_after(original: Callable[..., Any]) -> Callable[..., Any]:
    """`original`, run (its statements executed), then an injected failure."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        raise InjectedError("injected after " + original.__name__)

    return broken


def fail(*_: Any, **__: Any) -> Any:
    raise InjectedError("injected")


def break_anchor_check(home: Home, monkeypatch: pytest.MonkeyPatch) -> type[Exception]:
    """The real refusal: the anchor says the ledger went further than it does."""
    from mindledger.adapters.head_anchor import LedgerBehindAnchorError

    anchor = HeadAnchorFile(home.head_anchor)
    current = anchor.read()
    assert current is not None and current.position is not None and current.ledger_id
    anchor.advance(current.ledger_id, current.position + 5, "f" * 64)
    return LedgerBehindAnchorError


def break_chain_entries(home: Home, monkeypatch: pytest.MonkeyPatch) -> type[Exception]:
    """The chain's entries cannot be computed (after the events were inserted)."""
    monkeypatch.setattr(postgres_ledger, "chain_entries", fail)
    monkeypatch.setattr(sqlite_ledger, "chain_entries", fail)
    return InjectedError


def break_after_chain_insert(home: Home, monkeypatch: pytest.MonkeyPatch) -> type[Exception]:
    """Events and chain rows inserted, then the append fails before it commits."""
    monkeypatch.setattr(AnchoredRecorder, "_note_head", raise_after(AnchoredRecorder._note_head))
    return InjectedError


def break_key_flush(home: Home, monkeypatch: pytest.MonkeyPatch) -> type[Exception]:
    """The key store cannot make the new events' keys durable (before anything is inserted)."""
    from mindledger.adapters.key_store import SQLiteKeyStore
    from mindledger.adapters.postgres_keys import PostgresKeyStore

    monkeypatch.setattr(SQLiteKeyStore, "flush", fail)
    monkeypatch.setattr(PostgresKeyStore, "flush", fail)
    return InjectedError


def break_id_fetch(home: Home, monkeypatch: pytest.MonkeyPatch) -> type[Exception]:
    """The recorder's notification ids cannot be read back after the events' INSERT."""
    fetch = PostgresApplicationRecorder._fetch_ids_after_insert_events
    monkeypatch.setattr(
        PostgresApplicationRecorder, "_fetch_ids_after_insert_events", raise_after(fetch)
    )
    monkeypatch.setattr(SQLiteCursor, "lastrowid", property(fail))  # SQLite's id per INSERT
    return InjectedError


BREAKS = [
    break_anchor_check,
    break_chain_entries,
    break_after_chain_insert,
    break_key_flush,
    break_id_fetch,
]


@pytest.mark.parametrize("breaking", BREAKS, ids=lambda f: f.__name__.removeprefix("break_"))
def test_an_append_that_fails_anywhere_writes_nothing_and_the_ledger_still_verifies(
    home: Home,
    breaking: Callable[[Home, pytest.MonkeyPatch], type[Exception]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = stored(home)
    anchor_before = home.head_anchor.read_bytes()
    app = open_mind(home)

    with monkeypatch.context() as patch:
        expected = breaking(home, patch)
        anchor_broken = home.head_anchor.read_bytes()
        with pytest.raises(expected):
            app.open_commitment("Call the bank")
    anchor_after = home.head_anchor.read_bytes()
    home.head_anchor.write_bytes(anchor_before)  # undo what break_anchor_check wrote

    assert stored(home) == before
    assert anchor_after == anchor_broken  # a failed append moves no anchor
    assert mindledger.open(home.path).verify()["ok"] is True
    app.open_commitment("Call the bank")  # the same append, unbroken, now goes through
    events, chain = stored(home)
    assert events == chain > before[0]
    assert mindledger.open(home.path).verify()["ok"] is True
    app.close()
