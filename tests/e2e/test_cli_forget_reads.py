"""Reading a mind after a forget is a normal case: every reading command exits 0 with no
traceback, and shows "[forgotten]" where the words were (never the words)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result
from tests.e2e.forget_memories import (
    CANARIES,
    MOCK,
    SURVIVOR,
    Memories,
    build_memories,
    forget,
    module_cli,
)

Cli = Callable[..., Result]
MARK = "[forgotten]"


@pytest.fixture(scope="module")
def forgotten_once(tmp_path_factory: pytest.TempPathFactory) -> Memories:
    """A mind whose every canary memory was forgotten, built once for the module (nine forgets
    and two imports: seconds a test)."""
    folder = tmp_path_factory.mktemp("forgotten")
    cli = module_cli(folder / "mind")
    assert cli("init", "--name", "Echo").exit_code == 0
    memories = build_memories(cli, folder / "mind", folder)
    for option, value in memories.selectors.values():
        assert forget(cli, option, value).exit_code == 0
    return memories


@pytest.fixture
def forgotten(forgotten_once: Memories, home: Path) -> Memories:
    """Each test's own copy of that mind, as the test's home (a read may rebuild a read model)."""
    shutil.copytree(forgotten_once.home, home)
    return Memories(home, forgotten_once.selectors)


def clean(result: Result) -> str:
    """The command's output, once it is known to have succeeded without a traceback."""
    assert result.exit_code == 0, result.output + result.stderr
    shown = result.output + result.stderr
    assert "Traceback" not in shown
    assert [w for w in CANARIES.values() if w.lower() in shown.lower()] == []
    return shown


@pytest.mark.parametrize(
    "args",
    [
        ["log"],
        ["log", "--limit", "1000", "--kind", "thread"],
        ["status"],
        ["commitments", "--all"],
        ["threads", "--all"],
        ["concepts"],
        ["knowledge", "list"],
        ["graph", "stats"],
        ["graph", "neighbors", "garden.secret"],
        ["recall", "spare key flowerpot locker code wifi password", "--no-server"],
        ["query", "SELECT * FROM turns"],
        ["query", "SELECT * FROM messages"],
        ["query", "SELECT * FROM events"],
    ],
    ids=" ".join,
)
def test_every_reading_command_reads_a_mind_with_forgotten_memories(
    cli: Cli, forgotten: Memories, args: list[str]
) -> None:
    clean(cli(*args))


def test_the_log_shows_forgotten_words_as_forgotten(cli: Cli, forgotten: Memories) -> None:
    events = json.loads(clean(cli("log", "--json", "--limit", "1000")))

    started = [e["payload"]["text"] for e in events if e["type"] == "mind.turn.started"]
    assert started == [MARK, MARK, f"Where do the {SURVIVOR} birds nest?"]
    replied = [e["payload"]["reply"] for e in events if e["type"] == "mind.turn.replied"]
    assert replied == [MARK, MARK, "On the beach, in the dunes."]
    observed = [e["payload"] for e in events if e["type"].endswith("message_observed")]
    assert [(p["speaker"], p["text"]) for p in observed] == [
        ("user", MARK),
        ("assistant", MARK),
        ("Caroline", MARK),
        ("Melanie", "A lovely dog name"),
    ]
    assert all("_forgotten" not in e["payload"] for e in events)


def test_the_turns_table_keeps_a_forgotten_turn_with_its_words_forgotten(
    cli: Cli, forgotten: Memories
) -> None:
    rows = json.loads(clean(cli("query", "SELECT text, reply, status FROM turns ORDER BY seq")))

    assert rows == [
        {"text": MARK, "reply": MARK, "status": "complete"},
        {"text": MARK, "reply": MARK, "status": "complete"},
        {
            "text": f"Where do the {SURVIVOR} birds nest?",
            "reply": "On the beach, in the dunes.",
            "status": "complete",
        },
    ]


def test_nothing_forgotten_is_offered_by_recall(cli: Cli, forgotten: Memories) -> None:
    texts = [i["text"] for i in json.loads(clean(cli("recall", "flowerpot", "--json")))["items"]]

    assert [t for t in texts if MARK in t] == []


def test_the_sent_prompt_of_a_forgotten_turn_and_of_one_that_quoted_it_are_gone(
    cli: Cli, forgotten: Memories
) -> None:
    turns = [r["stream_id"] for r in cli("query", "SELECT stream_id FROM turns").json()]

    shown = [clean(cli("log", "--turn", t)) for t in turns]

    # The words say "no recorded prompt" (as for a turn whose model was never called).
    assert [s.splitlines()[0].partition(" has ")[2] for s in shown] == 3 * [
        "no recorded prompt: its model was never called, or it ran before prompts were recorded"
    ]


def test_the_ledger_export_of_a_mind_with_forgotten_memories_verifies(
    cli: Cli, forgotten: Memories, tmp_path: Path
) -> None:
    clean(cli("export", str(tmp_path / "out"), "--format", "jsonl"))

    checked = cli("verify", "--export", str(tmp_path / "out" / "ledger.jsonl"), "--json")

    assert checked.exit_code == 0 and checked.json()["ok"] is True
    assert MARK not in (tmp_path / "out" / "ledger.jsonl").read_text()  # ciphertext, as stored


@pytest.mark.xfail(
    strict=True,
    reason="the md transcript prints every sealed field as its envelope since faceb22, "
    "forgotten or not (adapters/ledger_transcript.py opens nothing)",
)
def test_the_transcript_shows_forgotten_messages_as_forgotten(
    cli: Cli, forgotten: Memories, tmp_path: Path
) -> None:
    clean(cli("export", str(tmp_path / "md"), "--format", "md"))

    transcript = (tmp_path / "md" / "transcript.md").read_text()

    assert MARK in transcript
    assert f"Where do the {SURVIVOR} birds nest?" in transcript
    assert [w for w in CANARIES.values() if w.lower() in transcript.lower()] == []


def test_chat_reads_and_talks_over_forgotten_memories(cli: Cli, forgotten: Memories) -> None:
    typed = "/commitments\n/threads\n/concepts\n/identity\nWhere is my spare key?\n/context\n"

    shown = clean(cli("chat", *MOCK, "--mock-reply", "I do not know.", input=typed + "/prompt\n"))

    assert "I do not know." in shown
