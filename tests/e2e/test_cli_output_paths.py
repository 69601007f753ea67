"""Output paths the user names never destroy the home's own files, and a failed write keeps the
file that was there."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]


def home_bytes(home: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(home.iterdir()) if p.is_file()}


def one_error_line(result: Result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(
    "name", ["ledger.sqlite", "ledger-head.json", "config.json", "ledger.sqlite-wal", ".env"]
)
@pytest.mark.parametrize(
    "command",
    [
        ("graph", "export", "--out"),
        ("report", "activity", "--format", "png", "--out"),
        ("replay", "--into"),
    ],
)
def test_an_output_path_that_is_a_home_file_is_refused_and_the_home_kept(
    cli: Cli, mind_home: Path, name: str, command: tuple[str, ...]
) -> None:
    cli("commit", "one")
    assert cli("commitments").exit_code == 0
    before = home_bytes(mind_home)

    result = cli(*command, str(mind_home / name))

    assert result.exit_code == 1
    assert "own" in one_error_line(result)
    assert home_bytes(mind_home) == before
    assert cli("verify").exit_code == 0


def test_a_symlink_or_dotdot_to_the_ledger_is_refused(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    link = tmp_path / "graph.graphml"
    link.symlink_to(mind_home / "ledger.sqlite")
    ledger = (mind_home / "ledger.sqlite").read_bytes()

    via_link = cli("graph", "export", "--out", str(link))
    via_dots = cli("graph", "export", "--out", str(mind_home / "run" / ".." / "ledger.sqlite"))

    assert (via_link.exit_code, via_dots.exit_code) == (1, 1)
    one_error_line(via_link)
    one_error_line(via_dots)
    assert (mind_home / "ledger.sqlite").read_bytes() == ledger


def test_export_into_the_home_folder_is_refused(cli: Cli, mind_home: Path) -> None:
    result = cli("export", "--format", "csv", str(mind_home))

    assert result.exit_code == 1
    assert "own folder" in one_error_line(result)


def test_a_graph_export_to_a_file_writes_it_whole(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "g.json"
    out.write_text("old")

    result = cli("graph", "export", "--format", "json", "--out", str(out))

    assert result.exit_code == 0
    assert "nodes" in json.loads(out.read_text())
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".g.json")] == []


def test_a_failed_graph_export_keeps_the_existing_file(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "keep.graphml"
    out.write_text("precious")

    result = cli("graph", "export", "--out", str(out))  # no mind here: the export fails

    assert result.exit_code == 1
    assert "mind init" in one_error_line(result)
    assert out.read_text() == "precious"


def test_a_report_png_lands_whole_with_ordinary_permissions(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "a.png"

    result = cli("report", "activity", "--format", "png", "--out", str(out))

    assert result.exit_code == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    assert os.stat(out).st_mode & 0o644 == 0o644
