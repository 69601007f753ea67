"""`mind import chat`: a conversation is what it contains, not what its file is called; the
transcripts nothing can be made of are refused in one line with nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.importers import Observed, import_chat, record
from mindledger.compose import Home, open_mind, open_reader
from tests.conftest import T0, Result
from tests.fuzz.harness import ledger_state

Cli = Callable[..., Result]


def chat(path: Path, *contents: str, role: str = "user") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {"role": role if i % 2 == 0 else "assistant", "content": c} for i, c in enumerate(contents)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def imported(cli: Cli, path: Path, *options: str) -> dict[str, Any]:
    done = cli("import", "chat", str(path), *options, "--json")
    assert done.exit_code == 0, done.stderr
    result: dict[str, Any] = done.json()
    return result


def test_the_same_transcript_under_two_names_is_imported_once(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    first = imported(cli, chat(tmp_path / "a" / "history.jsonl", "I like tea", "Noted"))
    renamed = imported(cli, chat(tmp_path / "elsewhere" / "tea.jsonl", "I like tea", "Noted"))

    assert first["added"] == 2
    assert (renamed["source"], renamed["added"], renamed["skipped"]) == (first["source"], 0, 2)


def test_two_different_transcripts_under_one_name_are_both_imported_whole(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    ann = imported(cli, chat(tmp_path / "a" / "history.jsonl", "hello", "hi Ann", "bye"))
    bob = imported(cli, chat(tmp_path / "c" / "history.jsonl", "hello", "hi Bob"))

    assert (ann["added"], bob["added"], bob["skipped"]) == (3, 2, 0)
    assert ann["source"] != bob["source"]


def test_a_grown_transcript_adds_its_new_messages_to_the_same_conversation(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    first = imported(cli, chat(tmp_path / "a" / "history.jsonl", "hello", "hi Ann"))
    grown = imported(cli, chat(tmp_path / "b" / "later.jsonl", "hello", "hi Ann", "more"))
    older = imported(cli, chat(tmp_path / "c" / "copy.jsonl", "hello"))

    assert (grown["source"], grown["added"], grown["skipped"]) == (first["source"], 1, 2)
    assert (older["source"], older["added"]) == (first["source"], 0)


def test_a_named_conversation_goes_on_with_its_own_transcript(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    one = imported(cli, chat(tmp_path / "a.jsonl", "hello", "hi Ann"), "--conversation", "Ann")
    grown = chat(tmp_path / "b.jsonl", "hello", "hi Ann", "bye")

    two = imported(cli, grown, "--conversation", "Ann")
    again = imported(cli, grown)  # the same transcript, its conversation not named

    assert one["source"] == two["source"] == again["source"] == "chat/Ann"
    assert (two["added"], two["skipped"], again["added"], again["skipped"]) == (1, 2, 0, 3)


def test_a_named_conversation_takes_the_next_days_log_once(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    imported(cli, chat(tmp_path / "mon.jsonl", "hello", "hi Ann"), "--conversation", "work")
    tuesday = chat(tmp_path / "tue.jsonl", "back again", "welcome back")

    goes_on = imported(cli, tuesday, "--conversation", "work")
    again = imported(cli, tuesday, "--conversation", "work")
    grown = imported(
        cli,
        chat(tmp_path / "tue2.jsonl", "back again", "welcome back", "bye"),
        "--conversation",
        "work",
    )

    assert (goes_on["source"], goes_on["added"]) == ("chat/work", 2)
    assert (again["added"], again["skipped"]) == (0, 2)
    assert (grown["added"], grown["skipped"]) == (1, 2)
    assert cli("verify").exit_code == 0


def test_a_named_conversation_refuses_another_transcript_that_begins_alike(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    imported(cli, chat(tmp_path / "a.jsonl", "hello", "hi Ann", "bye"), "--conversation", "work")
    bobs = chat(tmp_path / "b.jsonl", "hello", "hi Bob")
    before = ledger_state(mind_home)

    done = cli("import", "chat", str(bobs), "--conversation", "work")

    assert done.exit_code == 1
    assert done.stderr.splitlines() == [
        f"Error: {bobs} is not conversation 'work': its message 2 is not the conversation's "
        "message 2, so it is another transcript (nothing was imported); import it without "
        "--conversation, or name a new conversation"
    ]
    assert ledger_state(mind_home) == before
    assert cli("verify").exit_code == 0
    alone = imported(cli, bobs)
    assert (alone["source"] != "chat/work", alone["added"]) == (True, 2)


def test_a_conversation_imported_under_its_file_name_goes_on_there(tmp_path: Path) -> None:
    app = open_mind(Home(tmp_path / "mind"), create=True)
    app.init("Echo", open_reader(Home(tmp_path / "mind")).meta()[0])
    old = [Observed("user", "I like tea", T0, "history.jsonl:1")]  # as imports before content ids
    record(app, "chat/history.jsonl", ["user"], iter(old))
    path = chat(tmp_path / "history.jsonl", "I like tea", "Noted")

    done = import_chat(app, path)
    other = import_chat(app, chat(tmp_path / "x" / "history.jsonl", "Something else"))
    app.close()

    assert (done["source"], done["added"], done["skipped"]) == ("chat/history.jsonl", 1, 1)
    assert other["source"] != "chat/history.jsonl" and other["added"] == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "holds no message with text"),
        (b'\n{"role": "user", "content": "  "}\n', "holds no message with text"),
        (
            b'{"role": ' + b"[" * 3000 + b"]" * 3000 + b"}\n",
            ":1 is not JSON (it is nested too deeply",
        ),
        (b"[" * 3000 + b"]" * 3000 + b"\n", ":1 is not JSON (it is nested too deeply"),
    ],
)
def test_a_transcript_with_nothing_to_import_is_refused_in_one_line_writing_nothing(
    cli: Cli, mind_home: Path, tmp_path: Path, data: bytes, message: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    before = ledger_state(mind_home)

    done = cli("import", "chat", str(path))

    assert done.exit_code == 1
    assert done.stderr.startswith("Error: ") and len(done.stderr.splitlines()) == 1
    assert message in done.stderr
    assert ledger_state(mind_home) == before


def test_a_transcript_with_a_byte_order_mark_is_read(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"role": "user", "content": "I like tea"}\n')

    assert imported(cli, path)["added"] == 1


def test_an_import_racing_another_of_the_same_transcript_reads_what_it_wrote(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path / "mind")
    first = open_mind(home, create=True)
    first.init("Echo", open_reader(home).meta()[0])
    path = chat(tmp_path / "long.jsonl", *(f"message {i}" for i in range(1200)))
    raced: list[dict[str, Any]] = []
    second = open_mind(home)  # another process's mind on the same ledger

    def other_import_meanwhile(_: int) -> None:
        if not raced:  # after this import's first batch: another process imports it all
            raced.append(import_chat(second, path))

    done = import_chat(first, path, progress=other_import_meanwhile)
    again = import_chat(first, path)
    first.close()
    second.close()

    assert 0 < done["added"] < 1200  # its first batch; the other found it and added the rest
    assert raced[0]["added"] + done["added"] == 1200
    assert done["source"] == raced[0]["source"]
    assert (again["added"], again["skipped"]) == (0, 1200)
