"""Inputs the fuzzers found ending in a traceback or a split error line (issue 12): each is now
refused with exit 1 and one `Error:` line saying what is wrong and how to fix it, and the
ledger is left as it was."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import click
from click.testing import CliRunner

from cli.output import echo
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

    one_error_line(result, "workspace path", "File name too long", "give a folder path")
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
