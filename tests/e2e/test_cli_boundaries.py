"""Inputs at the edge of the CLI: undecodable arguments, unreadable files, bad homes, bad lines.

Each is refused with one `Error: ...` line and a non-zero exit, and leaves the ledger as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
from tests.conftest import Result

Cli = Callable[..., Result]


def ledger_head(home: Path) -> tuple[int, str | None]:
    """The ledger's last position and hash: any write changes them."""
    reader = SQLiteLedgerReader(home / "ledger.sqlite")
    try:
        return reader.head()
    finally:
        reader.close()


def assert_one_error_line(result: Result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["recall", "\udcff"], "argument QUERY"),
        (["thread", "resolve", "\udcff", "--as", "dissolved"], "argument ID"),
        (["query", "SELECT '\udcff'"], "argument SQL"),
        (["close", "\udcff"], "argument CID"),
        (["commit", "tea", "--concept", "a\udcfe"], "option --concept"),
        (["turn", "hi", "--model", "mock", "--mock-reply", "\udcff"], "option --mock-reply"),
        (["concept", "define", "x.y", "caf\udce9"], "argument DEFINITION"),
    ],
)
def test_an_argument_that_is_not_utf8_is_refused_naming_it(
    cli: Cli, mind_home: Path, args: list[str], named: str
) -> None:
    before = ledger_head(mind_home)

    result = cli(*args)

    assert_one_error_line(result, named, "not valid UTF-8", "byte 0x")
    assert ledger_head(mind_home) == before


def test_a_mock_reply_file_that_is_missing_is_one_error_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    before = ledger_head(mind_home)

    result = cli("turn", "hi", "--model", "mock", "--mock-reply", f"@{tmp_path}/none.txt")

    assert_one_error_line(result, "cannot read", "none.txt")
    assert ledger_head(mind_home) == before


@pytest.mark.parametrize("command", [["turn", "hi"], ["tick"], ["chat"]])
def test_a_mock_reply_file_that_is_not_utf8_is_one_error_line(
    cli: Cli, mind_home: Path, tmp_path: Path, command: list[str]
) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_bytes(b"caf\xe9 \xff")
    before = ledger_head(mind_home)

    result = cli(*command, "--model", "mock", "--mock-reply", f"@{reply}")

    assert_one_error_line(result, "not UTF-8 text", "reply.txt")
    assert ledger_head(mind_home) == before


def test_tick_reads_its_mock_reply_from_a_file(cli: Cli, mind_home: Path, tmp_path: Path) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_text("Looked at the threads.")

    result = cli("tick", "--model", "mock", "--mock-reply", f"@{reply}", "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json()["turn"]["reply"] == "Looked at the threads."


def test_tick_with_the_mock_model_and_no_reply_is_refused_before_anything_is_recorded(
    cli: Cli, mind_home: Path
) -> None:
    before = ledger_head(mind_home)

    result = cli("tick", "--model", "mock")

    assert_one_error_line(result, "--model mock needs --mock-reply")
    assert ledger_head(mind_home) == before


def test_a_failed_init_leaves_nothing_and_the_next_init_starts_a_new_ledger(
    cli: Cli, home: Path
) -> None:
    refused = cli("init", "--name", "")

    assert_one_error_line(refused, "name is empty")
    assert not home.exists()
    assert cli("init", "--name", "Echo").exit_code == 0
    assert ledger_head(home)[0] == 1


def test_an_init_that_fails_midway_removes_what_it_created(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.domain.application import Mind

    def disk_full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Mind, "init", disk_full)

    result = cli("init", "--name", "Echo")

    assert_one_error_line(result, "no space left to write", "free some space")
    assert not home.exists()


def test_init_in_an_existing_folder_that_fails_keeps_the_folder_and_its_files(
    cli: Cli, home: Path
) -> None:
    home.mkdir()
    (home / "notes.txt").write_text("mine")

    result = cli("init", "--name", "two\nlines")

    assert_one_error_line(result, "single line")
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt"]


def test_init_on_a_home_that_is_a_file_is_one_error_line(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    home.write_text("not a folder")

    result = cli("init")

    assert_one_error_line(result, "(it is a file); it takes a folder")
    assert home.read_text() == "not a folder"


def test_a_chat_line_with_a_control_character_or_bad_bytes_is_refused_and_the_chat_goes_on(
    cli: Cli, mind_home: Path
) -> None:
    script = b"first words\nbell \x07 here\ncaf\xe9\n/model \x02\nlast words\n"
    before = ledger_head(mind_home)[0]

    result = cli("chat", "--model", "mock", "--mock-reply", "Noted.", input=script)

    assert result.exit_code == 0, result.stderr
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 3 and all(e.startswith("Error: ") for e in errors)
    assert "U+0007" in errors[0] and "not valid UTF-8 (byte 0xE9)" in errors[1]
    assert result.output.count("Noted.") == result.output.count("Echo> ") == 2
    log = cli("log", "--limit", "100", "--json").json()
    started = [e["payload"] for e in log if e["type"] == "mind.turn.started"]
    assert [s["text"] for s in started] == ["first words", "last words"]
    # Two turns of 4 events each: message, its number, reply, record.
    assert ledger_head(mind_home)[0] == before + 8


def chat_file(path: Path, lines: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_two_different_files_with_the_same_name_both_import_fully(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    a = chat_file(tmp_path / "a" / "history.jsonl", [{"role": "user", "content": "I like tea"}])
    b = chat_file(
        tmp_path / "b" / "history.jsonl",
        [{"role": "user", "content": "I moved to Oslo"}, {"role": "assistant", "content": "Ah"}],
    )

    first = cli("import", "chat", str(a), "--json").json()
    second = cli("import", "chat", str(b), "--json").json()
    again = cli("import", "chat", str(b), "--json").json()

    assert (first["added"], second["added"], second["skipped"]) == (1, 2, 0)
    assert first["source"] != second["source"]
    assert again == {
        "source": second["source"],
        "file": str(b),
        "added": 0,
        "skipped": 2,
        "skipped_reasons": {"already imported": 2},
    }


def test_a_grown_transcript_adds_only_its_new_lines_and_keeps_repeated_messages(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    lines: list[dict[str, object]] = [
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "ok"},
    ]
    path = chat_file(tmp_path / "h.jsonl", lines)
    first = cli("import", "chat", str(path), "--json").json()
    chat_file(path, [*lines, {"role": "user", "content": "ok"}])

    grown = cli("import", "chat", str(path), "--json").json()

    assert (first["added"], grown["added"], grown["skipped"]) == (3, 1, 3)


def test_empty_messages_are_skipped_and_reported(cli: Cli, mind_home: Path, tmp_path: Path) -> None:
    path = chat_file(
        tmp_path / "h.jsonl",
        [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "  \n\t "},
            {"role": "assistant", "content": None},
        ],
    )

    text = cli("import", "chat", str(path))

    assert text.exit_code == 0
    assert "1 messages added, 2 skipped (2 empty message)" in text.output
    rows = cli("query", "SELECT text FROM messages WHERE source_id IS NOT NULL").json()
    assert rows == [{"text": "hello"}]


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ({"role": "wizard", "content": "abracadabra"}, "role 'wizard'"),
        ({"role": 7, "content": "x"}, "role 7"),
        ({"role": "user", "content": ["a", "b"]}, "not a string"),
        ({"role": "user", "content": "bell \x07"}, "U+0007"),
        ({"role": "user", "content": "x", "time": "0001-01-01T00:00:00Z"}, "years 1970 to 2999"),
        ({"role": "user", "content": "x", "time": "9999-12-31T23:59:59Z"}, "years 1970 to 2999"),
        ({"role": "user", "content": "x", "time": "yesterday"}, "not ISO-8601"),
    ],
)
def test_a_transcript_with_a_bad_line_is_refused_whole_naming_the_line(
    cli: Cli, mind_home: Path, tmp_path: Path, line: dict[str, object], fragment: str
) -> None:
    path = chat_file(tmp_path / "h.jsonl", [{"role": "user", "content": "fine"}, line])
    before = ledger_head(mind_home)

    result = cli("import", "chat", str(path))

    assert_one_error_line(result, "h.jsonl:2", fragment)
    assert ledger_head(mind_home) == before


def test_a_locomo_file_without_conversations_is_refused_in_one_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "empty.json"
    path.write_text("[]")

    result = cli("import", "locomo", str(path))

    assert_one_error_line(result, "no conversations in", "empty.json")


def test_a_locomo_session_time_outside_the_sensible_years_is_refused_naming_it(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    turn = {"speaker": "A", "dia_id": "D1:1", "text": "hi"}
    conversation = {
        "speaker_a": "A",
        "speaker_b": "B",
        "session_1": [turn],
        "session_1_date_time": "1:56 pm on 8 May, 0001",
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps([{"sample_id": "s1", "conversation": conversation}]))
    before = ledger_head(mind_home)

    result = cli("import", "locomo", str(path))

    assert_one_error_line(result, "s1 session_1", "years 1970 to 2999")
    assert ledger_head(mind_home) == before


def test_roles_are_stored_lower_case(cli: Cli, mind_home: Path, tmp_path: Path) -> None:
    path = chat_file(tmp_path / "h.jsonl", [{"role": " User", "content": "hi"}])

    cli("import", "chat", str(path))

    assert cli("query", "SELECT speaker FROM messages WHERE source_id IS NOT NULL").json() == [
        {"speaker": "user"}
    ]


@pytest.mark.parametrize("command", [["status"], ["commitments"], ["recall", "tea"]])
def test_commands_on_a_home_that_is_a_file_say_so(cli: Cli, home: Path, command: list[str]) -> None:
    home.write_text("not a folder")

    result = cli(*command)

    assert_one_error_line(result, "(it is a file); it takes a folder")


def test_a_failed_init_leaves_a_ledger_that_already_holds_events_alone(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.domain.application import Mind

    real_init = Mind.init

    def recorded_by_another_process_then_failed(self: Mind, name: str, ledger_id: str) -> None:
        real_init(self, "Other", ledger_id)  # as a concurrent init would have
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Mind, "init", recorded_by_another_process_then_failed)

    result = cli("init", "--name", "Echo")

    assert_one_error_line(result, "cannot create a mind")
    assert ledger_head(home)[0] == 1
