"""Words a forget must take wherever they were copied: into a later turn's prompt (by a refusal
notice, a triage demand, a failed generation), into a question routed to knowledge, into an
accepted claim; and what retrieval must stop offering once they are gone."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, subprocess_env
from tests.e2e.forget_memories import (
    events_of,
    files_holding,
    forget,
    read_side,
    turn,
)
from tests.e2e.test_cli_forget import MIND

Cli = Callable[..., Result]
CANARY = "Zqxcopied"


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
    assert cli("ask", f"Where is the spare key {CANARY}?", "--json").exit_code == 0
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
