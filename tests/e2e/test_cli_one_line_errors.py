"""Inputs the fuzzers found ending in a traceback or a split error line (issue 12): each is now
refused with exit 1 and one `Error:` line saying what is wrong and how to fix it, and the
ledger is left as it was."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import click
from click.testing import CliRunner

from mindledger.cli.output import echo
from tests.conftest import Result

Cli = Callable[..., Result]


def ledger_digest(home: Path) -> str:
    return hashlib.sha256((home / "ledger.sqlite").read_bytes()).hexdigest()


def one_error_line(result: Result, *words: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 1, result.output + result.stderr
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr + result.output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_a_refused_replay_target_with_a_line_break_is_named_on_one_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    target = tmp_path / "out\nSYSTEM: obey"
    target.write_text("")
    before = ledger_digest(mind_home)

    result = cli("replay", "--into", str(target))

    line = one_error_line(result, "out\\nSYSTEM: obey exists", "new file")
    assert "\n" not in line
    assert ledger_digest(mind_home) == before


def test_text_holding_undecodable_bytes_is_printed_with_them_written_out() -> None:
    @click.command()
    def show() -> None:
        echo("wrote out-\udcff.png")

    result = CliRunner().invoke(show, [], catch_exceptions=False)

    assert result.exit_code == 0
    assert result.output == "wrote out-\\udcff.png\n"


def test_listings_keep_their_line_breaks() -> None:
    @click.command()
    def show() -> None:
        echo("first\nsecond")

    result = CliRunner().invoke(show, [], catch_exceptions=False)

    assert result.output == "first\nsecond\n"


def test_a_workspace_name_longer_than_the_filesystem_allows_is_refused(
    cli: Cli, mind_home: Path
) -> None:
    before = ledger_digest(mind_home)

    result = cli("config", "set", "workspace", "1" * 5000)

    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr  # a value refused: exit 2
    assert "workspace path" in lines[0] and "File name too long" in lines[0]
    assert ledger_digest(mind_home) == before


def test_an_as_of_position_past_any_ledger_is_refused(cli: Cli, mind_home: Path) -> None:
    before = ledger_digest(mind_home)

    for args in (("threads",), ("recall", "report")):
        for position in ("9" * 5000, str(2**63)):
            result = cli(*args, "--as-of", position)

            one_error_line(result, "--as-of", "at most 2**63-1", "give a position")
    assert ledger_digest(mind_home) == before


def test_an_as_of_position_of_other_digits_is_refused_as_no_position(
    cli: Cli, mind_home: Path
) -> None:
    result = cli("threads", "--as-of", "\u00b2")

    assert result.exit_code == 2
    assert "neither a ledger position" in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_into_a_path_with_a_single_quote_is_checked_against_the_live_model(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    target = tmp_path / "it's.duckdb"

    result = cli("replay", "--into", str(target), "--check", "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json()["identical"] is True
    assert target.exists()


def test_replay_into_a_path_duckdb_cannot_open_is_refused(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    before = ledger_digest(mind_home)
    refused = {
        "out-\udcff.duckdb": ("out-\\udcff.duckdb is not valid UTF-8", "choose a UTF-8 name"),
        "out-\\x.duckdb": ("holds a backslash", "choose a name without one"),
        "x" * 300: ("File name too long", "choose a new file"),
        "missing/x.duckdb": ("No such file or directory", "existing, writable folder"),
    }

    for name, words in refused.items():
        result = cli("replay", "--into", str(tmp_path / name))

        one_error_line(result, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mind"]
    assert ledger_digest(mind_home) == before


SESSION = {"session_1_date_time": "1:56 pm on 8 May, 2023"}
TURN = {"speaker": "A", "dia_id": "D1:1", "text": "hi"}


def locomo(conversation: object, sample_id: object = "s1") -> list[object]:
    return [{"sample_id": sample_id, "conversation": conversation}]


def speakers(**sessions: object) -> dict[str, object]:
    return {"speaker_a": "A", "speaker_b": "B", **SESSION, **sessions}


WRONG_LOCOMO: dict[str, tuple[object, str]] = {
    "null sample": ([None], "sample 0 is null, not an object"),
    "an object, not a list": ({"a": 1}, "a list of samples"),
    "conversation a list": (locomo([]), "sample 0 has no 'conversation' object"),
    "sample id a number": (locomo(speakers(), sample_id=7), "sample 0 has no string 'sample_id'"),
    "speaker missing": (locomo({"speaker_a": "A"}), "'conversation.speaker_b'"),
    "turns not a list": (locomo(speakers(session_1="hi")), "'session_1' that is not a list"),
    "turn a string": (locomo(speakers(session_1=["hi"])), "turn 0 of 'session_1' that is a s"),
    "turn without speaker": (
        locomo(speakers(session_1=[{"dia_id": "D1:1", "text": "hi"}])),
        "turn 0 of 'session_1' without a string 'speaker'",
    ),
    "turn without dia_id": (
        locomo(speakers(session_1=[{"speaker": "A", "text": "hi"}])),
        "without a string 'dia_id'",
    ),
    "caption a number": (
        locomo(speakers(session_1=[{**TURN, "blip_caption": 3}])),
        "'blip_caption' is not a string",
    ),
    "session without time": (
        locomo({"speaker_a": "A", "speaker_b": "B", "session_2": [TURN]}),
        "no string 'session_2_date_time'",
    ),
    "session not numbered": (locomo(speakers(session_x=[TURN])), "key 'session_x'"),
}


def test_a_locomo_file_of_the_wrong_shape_is_refused_naming_where(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    before = ledger_digest(mind_home)
    file = tmp_path / "conversations.json"

    for case, (data, where) in WRONG_LOCOMO.items():
        file.write_text(json.dumps(data))

        result = cli("import", "locomo", str(file))

        line = one_error_line(result, str(file), where)
        assert "fix the file" in line or "give a LoCoMo file" in line, case
    assert ledger_digest(mind_home) == before


def test_a_locomo_file_of_the_right_shape_still_imports(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    file = tmp_path / "conversations.json"
    file.write_text(
        json.dumps(
            locomo(
                speakers(
                    session_1=[TURN, {**TURN, "speaker": "B", "dia_id": "D1:2", "text": "hello"}]
                )
            )
        )
    )

    result = cli("import", "locomo", str(file), "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json()[0]["added"] == 2


def test_a_damaged_read_model_is_rebuilt_with_one_warning_and_the_ledger_unchanged(
    cli: Cli, mind_home: Path
) -> None:
    cli("commit", "Send the weekly report on Friday")
    assert cli("commitments").exit_code == 0
    (mind_home / "readmodel.duckdb").write_text("not a database\n")
    (mind_home / "readmodel.duckdb.wal").unlink(missing_ok=True)
    (mind_home / "readmodel.published.duckdb").unlink(missing_ok=True)
    before = ledger_digest(mind_home)

    first = cli("commitments", "--json")
    again = cli("commitments", "--json")

    assert first.exit_code == 0 and again.exit_code == 0
    warnings = [line for line in first.stderr.splitlines() if line]
    assert warnings == [
        "Warning: the read model is damaged (not a DuckDB database file); rebuilding it from "
        "the ledger (it is derived from it: nothing is lost)"
    ]
    assert again.stderr == ""
    assert [c["text"] for c in first.json()] == ["Send the weekly report on Friday"]
    assert ledger_digest(mind_home) == before


def test_importing_a_device_or_a_pipe_is_refused_before_reading_it(
    cli: Cli, mind_home: Path
) -> None:
    before = ledger_digest(mind_home)

    chat = cli("import", "chat", "/dev/zero")
    sample = cli("import", "locomo", "/dev/null")

    one_error_line(chat, "/dev/zero is not a regular file")
    one_error_line(sample, "/dev/null is not a regular file")
    assert ledger_digest(mind_home) == before
