"""A mind whose read model cannot be brought up to date (a ledger event this mindledger cannot
project) takes no more writes: every command that appends is refused in one line naming the
event's position and `mind doctor`, and the ledger keeps its length."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from eventsourcing.persistence import StoredEvent

from mindledger.compose import Home, open_mind, open_reader
from tests.conftest import Result

Cli = Callable[..., Result]
MOCK = ("--model", "mock", "--mock-reply", "Noted.")

# Every command that appends, as typed ({cid}, {kid}, {tid}: what the mind holds already).
WRITES = {
    "commit": ("commit", "Call the plumber"),
    "close": ("close", "{cid}"),
    "remember": ("remember", "The bins go out on Tuesday"),
    "ask-exact": ("ask", "What is the door code?", *MOCK),
    "turn": ("turn", "hello again", *MOCK),
    "tick": ("tick", *MOCK),
    "concept-define": ("concept", "define", "project.beta", "The second project"),
    "concept-alias": ("concept", "alias", "project.alpha", "alpha"),
    "concept-relate": ("concept", "relate", "project.alpha", "team.billing", "--as", "owned-by"),
    "concept-bind": ("concept", "bind", "project.alpha", "--commitment", "{cid}"),
    "identity-adopt": ("identity", "adopt", "Echo Two"),
    "thread-open": ("thread", "open", "beta", "--content", "Is the beta on time?"),
    "thread-resolve": ("thread", "resolve", "{tid}", "--as", "dissolved"),
    "knowledge-verify": ("knowledge", "verify", "{kid}"),
    "knowledge-edit": ("knowledge", "edit", "{kid}", "2292"),
    "knowledge-delete": ("knowledge", "delete", "{kid}"),
    "approve": ("approve", "last"),
    "discard": ("discard", "last"),
    "config-set": ("config", "set", "threads.top_k", "7"),
    "import-chat": ("import", "chat", "{chat}"),
    # A forget's purge rebuilds the read model: refused before any key goes.
    "forget": ("forget", "--commitment", "{cid}", "--yes"),
}


def head(home: Path) -> int:
    reader = open_reader(Home(home))
    try:
        return reader.head()[0]
    finally:
        reader.close()


@pytest.fixture
def stuck(cli: Cli, mind_home: Path, tmp_path: Path) -> dict[str, str]:
    """A mind with one of everything, then an event this version cannot project (an older
    bug's), written below the floor as such a bug would have."""
    cid = cli("commit", "Water the ficus", "--json").json()["cid"]
    kid = cli(
        "remember", "2291", "--question", "What is the door code?", "--state", "verified", "--json"
    ).json()["id"]
    assert cli("concept", "define", "project.alpha", "The first project").exit_code == 0
    assert cli("concept", "define", "team.billing", "The billing team").exit_code == 0
    tid = cli("thread", "open", "alpha", "--content", "Is alpha late?", "--json").json()
    assert cli("turn", "hello", *MOCK).exit_code == 0
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"role": "user", "content": "hi there"}\n')
    app = open_mind(Home(mind_home), guarded=False)
    app.recorder.insert_events(
        [StoredEvent(uuid.uuid4(), 1, "evil.unknown", b'{"timestamp":"2026-05-01T09:00:00Z"}')]
    )
    app.close()
    return {"cid": cid, "kid": kid, "tid": tid["id"], "chat": str(chat)}


@pytest.mark.parametrize("args", WRITES.values(), ids=WRITES.keys())
def test_a_write_to_a_mind_that_cannot_project_is_refused_and_appends_nothing(
    cli: Cli, mind_home: Path, stuck: dict[str, str], args: tuple[str, ...]
) -> None:
    before = head(mind_home)

    result = cli(*(a.format(**stuck) for a in args))

    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert f"position {before}" in lines[0] and "mind doctor" in lines[0]
    assert "Traceback" not in result.stderr
    assert head(mind_home) == before
    assert not (mind_home / "forget.pending").exists()  # no forget left half done


def test_the_check_before_appending_costs_nothing_more_once_made(cli: Cli, mind_home: Path) -> None:
    app = open_mind(Home(mind_home))
    try:
        app.define_concept("project.alpha", "The first project")  # checked: caught up
        app.define_concept("project.beta", "The second project")  # follows what was checked
    finally:
        app.close()

    assert cli("concepts", "--json").exit_code == 0
    assert head(mind_home) == 3
