"""Words a forget must take wherever they were copied: into a later turn's prompt (by a refusal
notice, a triage demand, a failed generation), into a question routed to knowledge, into an
accepted claim; and what retrieval must stop offering once they are gone."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from tests.conftest import Result, subprocess_env
from tests.e2e.forget_memories import (
    SURVIVOR,
    events_of,
    files_holding,
    forget,
    read_side,
    recalls,
    turn,
    verified,
)
from tests.e2e.test_cli_forget import MIND
from tests.foreign_files import SMALL_PMM, pmm_ledger

Cli = Callable[..., Result]
CANARY = "Zqxcopied"
ASKED = "mind.ask.routed"


def shows(cli: Cli, folder: Path, word: str) -> bool:
    return word.lower() in read_side(cli, folder).lower()


def test_a_later_prompt_that_quoted_a_refused_line_loses_it_with_the_turn(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    refused = turn(cli, "Close the old one", f"Done.\nCLOSE: c0000000000 {CANARY} is settled")
    turn(cli, "And now?", "Nothing else.")  # its prompt quotes the refused line
    assert shows(cli, tmp_path / "before", CANARY)

    result = forget(cli, "--turn", str(refused["turn"]))

    assert result.json()["context_turns"] == 2
    assert not shows(cli, tmp_path / "after", CANARY)
    assert files_holding(mind_home, CANARY) == []


def test_a_question_routed_to_knowledge_goes_with_the_item(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    item = cli(
        "remember",
        "under the mat",
        "--question",
        "where is the spare key",
        "--state",
        "verified",
        "--confidence",
        "0.99",
        "--json",
    ).json()
    # Scripted: the embedded model would be called for real (and time out on a busy machine).
    asked = cli("ask", f"Where is the spare key {CANARY}?", "--model", "mock", "--mock-reply",
                "I do not know.", "--json")  # fmt: skip
    assert asked.exit_code == 0, asked.output
    assert cli("ask", "WHERE is the spare key", "--json").json()["route"] == "memory-exact"
    env = subprocess_env(mind_home)  # a process that imported no more than `mind forget` needs

    done = subprocess.run(
        [*MIND, "forget", "--knowledge", item["id"], "--yes", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"] == {"ask": 1, "knowledge": 1}
    questions = [e["payload"]["question"] for e in events_of(cli, "mind.ask.routed")]
    assert questions == [f"Where is the spare key {CANARY}?", "[forgotten]"]


def test_a_turn_answered_from_knowledge_takes_its_routed_question_with_it(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    cli(
        "remember",
        "under the mat",
        "--question",
        "where is the spare key",
        "--state",
        "verified",
        "--confidence",
        "0.99",
    )
    said = "Where IS   the spare key"  # the same intent, in words of its own
    asked = turn(cli, said, "unused")
    assert asked["reply"] == "under the mat" and said in read_side(cli, tmp_path / "before")

    result = forget(cli, "--turn", str(asked["turn"]))

    assert result.json()["counts"] == {"ask": 1, "turn": 3}
    questions = [e["payload"]["question"] for e in events_of(cli, "mind.ask.routed")]
    assert questions == ["[forgotten]"]
    assert said not in read_side(cli, tmp_path / "after")


def test_a_forgotten_thread_is_no_longer_live_nor_offered(cli: Cli, mind_home: Path) -> None:
    thread = cli("thread", "open", f"Ask about {CANARY}", "--content", "the plan").output.strip()

    forget(cli, "--thread", thread)

    assert cli("threads", "--json").json() == []
    offered = cli("recall", "plan", "--no-server", "--json").json()["items"]
    assert [i for i in offered if i["kind"] == "thread"] == []
    assert cli("threads", "--all", "--json").json()[0]["status"] == "forgotten"


def test_a_thread_worked_on_before_it_was_forgotten_stays_forgotten(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = cli("thread", "open", f"Ask about {CANARY}", "--content", "the plan").output.strip()
    (mind_home / "workspace").mkdir(exist_ok=True)
    (mind_home / "workspace" / "notes.md").write_text("found it")
    monkeypatch.setenv("MIND_NOW", "2026-05-02T09:00:00Z")
    worked = turn(cli, "Any news?", f'Found it.\nTHREAD-WORK: {thread} {{"file": "notes.md"}}')
    assert worked["rejections"] == []

    forget(cli, "--thread", thread)

    assert cli("threads", "--json").json() == []
    assert cli("threads", "--all", "--json").json()[0]["status"] == "forgotten"


def test_a_forgotten_concept_is_not_offered_even_by_its_token(cli: Cli, mind_home: Path) -> None:
    cli("concept", "define", "garden.secret", f"The {CANARY} hedge")
    cli("concept", "alias", "garden.secret", "the hedge thing")
    cli("concept", "define", "garden.path", "The gravel path")
    cli("concept", "relate", "garden.path", "garden.secret", "--as", "leads.to")

    forget(cli, "--concept", "Garden.Secret")

    asked = "garden.secret garden.path the hedge thing forgotten"
    offered = cli("recall", asked, "--no-server", "--json").json()["items"]
    assert [i["text"] for i in offered if i["kind"] == "concept"] == [
        "#4 [concept garden.path] The gravel path"
    ]

    names = cli("query", "SELECT name FROM concept_names ORDER BY position").json()
    assert names == [{"name": "garden.secret"}, {"name": "garden.path"}]


def test_a_failed_generation_s_prompt_that_quoted_a_turn_loses_it_with_the_turn(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    told = turn(cli, f"My locker code is {CANARY} 4417", "Noted.")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    failed = cli(
        "turn",
        "Are you there?",
        "--model",
        "openai/nothing",
        "--no-server",
        "--api-base",
        f"http://127.0.0.1:{port}/v1",
    )
    assert failed.exit_code == 1 and shows(cli, tmp_path / "before", CANARY)

    result = forget(cli, "--turn", str(told["turn"]))

    assert result.json()["context_turns"] == 2
    assert not shows(cli, tmp_path / "after", CANARY)


MADE = {
    "commitment": "Zqxpromised",
    "concept": "Zqxdefined",
    "thread": "Zqxthreaded",
}


@pytest.mark.parametrize("kind", sorted(MADE))
def test_what_a_reply_made_goes_with_the_turn_whose_raw_reply_holds_its_line(
    cli: Cli, mind_home: Path, kind: str
) -> None:
    reply = (
        "Sure.\n"
        f"COMMIT: Buy {MADE['commitment']} flowers\n"
        f"CONCEPT: garden.kept = The {MADE['concept']} hedge\n"
        f'THREAD: {{"label": "Ask about {MADE["thread"]}", "content": "the plan"}}'
    )
    made = turn(cli, "Plan the garden", reply)
    turn(cli, f"Where do the {SURVIVOR} birds nest?", "On the beach.")
    named = {
        "commitment": str(made["opened"][0]),  # type: ignore[index]
        "concept": "garden.kept",
        "thread": str(made["threads"][0]).split()[-1],  # type: ignore[index]
    }
    planned = cli("forget", f"--{kind}", named[kind], "--dry-run", "--json").json()

    result = forget(cli, f"--{kind}", named[kind])

    counts = result.json()["counts"]
    assert counts == planned["counts"] and counts[kind] == 1 and counts["turn"] == 3
    assert files_holding(mind_home, MADE[kind]) == []
    raw = cli("query", "SELECT reply_raw FROM turns").output
    assert MADE[kind] not in raw and "On the beach." in raw
    assert verified(cli) and recalls(cli, f"{SURVIVOR} birds", SURVIVOR)


def test_a_turn_takes_the_knowledge_its_message_asked_to_remember(
    cli: Cli, mind_home: Path
) -> None:
    told = turn(cli, f"remember that my bank PIN is {CANARY}4417", "ok")
    assert CANARY in cli("knowledge", "list").output
    kept = cli("remember", "under the mat", "--question", "where is the spare key", "--json")

    result = forget(cli, "--turn", str(told["turn"]))

    assert result.json()["counts"] == {"knowledge": 1, "turn": 3}
    assert CANARY not in cli("knowledge", "list").output
    assert files_holding(mind_home, CANARY) == []
    assert kept.json()["id"] in cli("knowledge", "list").output and verified(cli)


def test_an_imported_conversation_takes_the_records_its_import_kept(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    said = [
        (k, f"{c} {CANARY} substrate" if k == "user_message" else c, cast(dict[str, Any], m))
        for k, c, m in SMALL_PMM
    ]
    path = tmp_path / "pmm.json"
    path.write_text(json.dumps(pmm_ledger(said)))
    assert cli("import", "pmm", str(path)).exit_code == 0
    conversation = cli("query", "SELECT stream_id FROM conversations").json()[0]["stream_id"]
    assert recalls(cli, f"{CANARY} substrate", CANARY)

    result = forget(cli, "--conversation", conversation)

    assert result.json()["counts"] == {"conversation": 3, "import": 1 + len(SMALL_PMM)}
    assert not recalls(cli, f"{CANARY} substrate", CANARY)
    kept = cli("query", "SELECT content FROM imported_records WHERE content LIKE '%substrate%'")
    assert kept.json() == []
    assert files_holding(mind_home, CANARY) == []
    assert "keep a lighthouse log" in cli("commitments", "--json").output and verified(cli)


def test_a_speaker_takes_the_questions_it_asked_that_memory_answered(
    cli: Cli, mind_home: Path
) -> None:
    question = ("--question", "where is the spare key", "--state", "verified")
    cli("remember", "under the mat", *question, "--confidence", "0.99")
    said = "WHERE is the SPARE key"  # the item's question in a case only the asker's words have
    assert cli("ask", said, "--json").json()["route"] == "memory-exact"

    result = forget(cli, "--speaker", "user")

    assert result.json()["counts"] == {"ask": 1}
    payloads = [cast(dict[str, str], e["payload"]) for e in events_of(cli, ASKED)]
    assert [p["question"] for p in payloads] == ["[forgotten]"]
    stored = [p for p in mind_home.rglob("*") if p.is_file() and said.encode() in p.read_bytes()]
    assert stored == []
    assert "where is the spare key" in cli("knowledge", "list").output and verified(cli)
