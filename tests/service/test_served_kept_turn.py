"""A served turn whose reply meets a full disk keeps its message, unanswered, and the server,
which lives on, records that turn interrupted as a process that ends leaves the next turn to:
at once when the ledger takes the write, else before the next turn (never later, never with
"the process stopped", which it did not). The full disk is injected: SQLite's own error,
raised by the ledger's insert at chosen writes (a real full disk's timing depends on sizes)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mindledger.adapters.sqlite_ledger import ChainedSQLiteRecorder
from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.minds import Minds
from mindledger.turn_stop import NO_ROOM
from tests.conftest import Result

Cli = Callable[..., Result]
MESSAGE = "The spare key is under the heron statue"


class Disk:
    """Which of the ledger's inserts from now (1 is the next) meet a full disk."""

    def __init__(self) -> None:
        self.full: set[int] = set()
        self.inserts = 0

    def fill_at(self, *inserts: int) -> None:
        self.full, self.inserts = set(inserts), 0


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    disk = Disk()
    real = ChainedSQLiteRecorder._insert_events

    def insert_events(self: ChainedSQLiteRecorder, c: Any, events: Any, **kwargs: Any) -> Any:
        disk.inserts += 1
        if disk.inserts in disk.full:
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, c, events, **kwargs)

    monkeypatch.setattr(ChainedSQLiteRecorder, "_insert_events", insert_events)
    return disk


@pytest.fixture
def served(mind_home: Path) -> Iterator[Callable[[str], Any]]:
    minds = Minds.open([Home(mind_home)])
    mind = next(iter(minds))
    headers = {"Authorization": f"Bearer {mind.token}"}
    with TestClient(build_app(minds), raise_server_exceptions=False) as client:

        def turn(text: str) -> Any:
            body = {"text": text, "model": "mock", "mock_reply": "Noted."}
            return client.post(f"/v1/minds/{mind.name}/turns", json=body, headers=headers)

        yield turn
    minds.close(10)


def turn_events(cli: Cli) -> list[tuple[str, str, str]]:
    """(kind, turn, reason) of every turn event, in ledger order."""
    events = cli("log", "--limit", "100", "--json").json()
    return [
        (e["type"].removeprefix("mind.turn."), e["aggregate"], e["payload"].get("reason") or "")
        for e in sorted(events, key=lambda e: e["position"])
        if e["type"].startswith("mind.turn.")
    ]


def test_a_served_turn_the_disk_stopped_is_recorded_interrupted_when_the_error_is_told(
    cli: Cli, mind_home: Path, disk: Disk, served: Callable[[str], Any]
) -> None:
    disk.fill_at(2)  # the message is saved; its reply is not; the interrupt is

    answer = served(MESSAGE)
    events = turn_events(cli)

    assert answer.status_code == 507
    kept = answer.json()["error"]["message"].split("kept as turn ")[1].split(",")[0]
    assert events == [("started", kept, ""), ("interrupted", kept, NO_ROOM)]
    said = cli("log", "--limit", "100", "--json").json()
    assert MESSAGE in {e["payload"].get("text") for e in said if e["aggregate"] == kept}
    assert served("Where is the spare key?").json()["status"] == "complete"


def test_a_kept_turn_the_disk_would_not_let_settle_is_settled_before_the_next_turn(
    cli: Cli, mind_home: Path, disk: Disk, served: Callable[[str], Any]
) -> None:
    disk.fill_at(2, 3)  # neither the reply nor the interrupt told with the error is saved

    answer = served(MESSAGE)
    while_full = turn_events(cli)
    disk.fill_at()  # room again
    after = served("Where is the spare key?")
    events = turn_events(cli)

    assert answer.status_code == 507
    kept = while_full[0][1]
    assert while_full == [("started", kept, "")]
    assert after.json()["status"] == "complete"
    nxt = after.json()["turn"]
    assert events[:3] == [
        ("started", kept, ""),
        ("interrupted", kept, NO_ROOM),  # first: not "the process running this turn stopped"
        ("started", nxt, ""),
    ]
