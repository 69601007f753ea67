"""Conversations that earlier versions imported under their file's base name
(`chat/history.jsonl`) are found by their content, whatever the file is called now: nothing in
the ledger is rewritten, the old conversation goes on."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.importers import chat_messages
from mindledger.compose import Home, open_mind
from mindledger.domain.application import Mind
from mindledger.domain.conversation import conversation_id
from tests.conftest import Result
from tests.fuzz.harness import ledger_state

Cli = Callable[..., Result]


def chat(path: Path, *contents: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    roles = ("user", "assistant")
    lines = [{"role": roles[i % 2], "content": c} for i, c in enumerate(contents)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def imported(cli: Cli, path: Path) -> dict[str, Any]:
    done = cli("import", "chat", str(path), "--json")
    assert done.exit_code == 0, done.stderr
    result: dict[str, Any] = done.json()
    return result


def import_as_before_content_names(app: Mind, path: Path, ids: str) -> None:
    """What `mind import chat PATH` recorded before a conversation was named by its content:
    the conversation `chat/<base name>`, its messages' ids from role, time and text
    (`ids="content"`, 1a7d382 to 986eb5c) or from the file's name and line (`ids="line"`,
    `history.jsonl:1`, 31f5c3b to 1a7d382)."""
    messages = list(chat_messages(path))
    if ids == "line":
        lines = [n for n, text in enumerate(path.read_text().splitlines(), 1) if text.strip()]
        messages = [
            replace(m, source_id=f"{path.name}:{n}") for m, n in zip(messages, lines, strict=True)
        ]
    speakers = sorted({m.speaker for m in messages})
    app.import_conversation(f"chat/{path.name}", speakers, iter(messages))


@pytest.fixture(params=["content", "line"], ids=["content-ids", "line-ids"])
def old_history(request: pytest.FixtureRequest, mind_home: Path, tmp_path: Path) -> Path:
    """A mind holding `history.jsonl` (tea, then a reply) as an earlier version imported it."""
    path = chat(tmp_path / "old" / "history.jsonl", "I like tea", "Noted: tea")
    app = open_mind(Home(mind_home))
    try:
        import_as_before_content_names(app, path, request.param)
    finally:
        app.close()
    return path


def test_an_old_conversation_under_another_name_adds_nothing(
    cli: Cli, mind_home: Path, tmp_path: Path, old_history: Path
) -> None:
    before = ledger_state(mind_home)

    renamed = imported(cli, chat(tmp_path / "new" / "tea.jsonl", "I like tea", "Noted: tea"))
    same = imported(cli, old_history)

    assert (renamed["source"], renamed["added"], renamed["skipped"]) == (
        "chat/history.jsonl",
        0,
        2,
    )
    assert (same["source"], same["added"]) == ("chat/history.jsonl", 0)
    assert ledger_state(mind_home) == before
    assert cli("verify").exit_code == 0


def test_a_grown_copy_of_an_old_conversation_goes_on_there(
    cli: Cli, mind_home: Path, tmp_path: Path, old_history: Path
) -> None:
    grown = chat(tmp_path / "new" / "tea.jsonl", "I like tea", "Noted: tea", "And cake")

    done = imported(cli, grown)
    again = imported(cli, grown)

    assert (done["source"], done["added"], done["skipped"]) == ("chat/history.jsonl", 1, 2)
    assert (again["source"], again["added"]) == ("chat/history.jsonl", 0)
    assert cli("verify").exit_code == 0


def test_another_transcript_under_an_old_conversations_name_is_never_folded_in(
    cli: Cli, mind_home: Path, tmp_path: Path, old_history: Path
) -> None:
    other = chat(tmp_path / "c" / "history.jsonl", "I like tea", "Noted: coffee", "More")

    done = imported(cli, other)
    again = imported(cli, other)

    assert done["source"] != "chat/history.jsonl"
    assert (done["added"], done["skipped"]) == (3, 0)
    assert (again["source"], again["added"]) == (done["source"], 0)
    assert cli("verify").exit_code == 0


def test_a_forgotten_old_conversation_is_no_transcript_and_stops_no_import(
    cli: Cli, mind_home: Path, tmp_path: Path, old_history: Path
) -> None:
    stream = conversation_id("chat/history.jsonl").hex
    assert cli("forget", "--conversation", stream, "--yes").exit_code == 0

    again = imported(cli, old_history)
    other = imported(cli, chat(tmp_path / "new" / "cake.jsonl", "I like cake"))

    assert again["source"] != "chat/history.jsonl"
    assert other["added"] == 1
    assert cli("verify").exit_code == 0
