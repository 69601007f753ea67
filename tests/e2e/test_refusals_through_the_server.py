"""A turn refused by the append guard (a ledger event this mindledger cannot project, or one
whose time it cannot read) says through the running server what it says in-process: the
server answers 409 `projection_stopped` (a known refusal, nothing written), the command line
prints the same one line, and the ledger keeps its length. Real processes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from eventsourcing.persistence import StoredEvent

from mindledger.compose import Home, open_mind, open_reader
from tests.e2e.server_processes import (
    Served,
    client_env,
    init_mind,
    run_in_process,
    run_mind,
    serving,
    verified,
)

FORGED = {
    "unknown-topic": (b"evil.unknown", b'{"timestamp":"2026-05-01T09:00:00Z"}'),
    "no-timestamp": (b"evil.unknown", b'{"nothing":1}'),
}
TURN = ["turn", "hello again", "--model", "mock", "--mock-reply", "Noted."]


def head(home: Path) -> int:
    reader = open_reader(Home(home))
    try:
        return reader.head()[0]
    finally:
        reader.close()


@pytest.fixture(scope="module")
def stuck_homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One home per forged event, each with a turn before it, written below the floor."""
    tmp_path = tmp_path_factory.mktemp("stuck")
    homes = {}
    for i, (name, (topic, state)) in enumerate(FORGED.items()):
        home = tmp_path / name
        init_mind(home, f"Echo{i}")
        done = run_in_process(
            ["turn", "hi", "--model", "mock", "--mock-reply", "Hello."],
            client_env(home, MIND_NO_SERVER="1"),
        )
        assert done.code == 0, done.err
        app = open_mind(Home(home), guarded=False)
        app.recorder.insert_events([StoredEvent(uuid.uuid4(), 1, topic.decode(), state)])
        app.close()
        homes[name] = home
    return homes


@pytest.fixture(scope="module")  # one server for both homes: its start is the cost
def served(stuck_homes: dict[str, Path]) -> Iterator[Served]:
    homes = list(stuck_homes.values())
    with serving(homes, client_env(homes[0])) as server:
        yield server


@pytest.mark.parametrize("forged", FORGED)
def test_a_turn_refused_by_the_append_guard_says_the_same_line_through_the_server(
    stuck_homes: dict[str, Path], served: Served, forged: str
) -> None:
    home = stuck_homes[forged]
    before = head(home)

    status, body = served.http(
        "POST",
        served.mind_path(home, "turns"),
        home,
        {"text": "hey", "model": "mock", "mock_reply": "Ok."},
    )
    fast = run_mind(TURN, client_env(home))
    slow = run_mind(TURN, client_env(home, MIND_NO_SERVER="1"))

    assert (status, body["error"]["code"]) == (409, "projection_stopped")
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)
    assert fast.code == 1
    lines = fast.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), fast.err
    assert f"position {before}" in lines[0] and "nothing was written" in lines[0]
    assert "mind doctor" in lines[0] and "server failed" not in lines[0]
    assert head(home) == before
    assert verified(home)
