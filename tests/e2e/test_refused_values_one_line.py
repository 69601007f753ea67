"""A value click refuses (a FOLDER that is a file, `--home` naming a file, an unknown setting
KEY) is one line `Error: ...` with exit 2, as a refused setting value is; click's usage block
is kept for a real syntax error (a missing argument). Nothing is written."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]


def ledger_digest(home: Path) -> str:
    return hashlib.sha256((home / "ledger.sqlite").read_bytes()).hexdigest()


REFUSED = {
    "export-into-a-file": (("export", "{file}"), "'FOLDER'"),
    "home-a-file-first": (("--home", "{file}", "status"), "'--home'"),
    "home-a-file-after": (("status", "--home", "{file}"), "'--home'"),
    "unknown-setting": (("config", "set", "nosuch.key", "v"), "'nosuch.key'"),
    # An empty path is not `.`: it wrote a backup or an export into the current folder.
    "backup-into-nothing": (("backup", ""), "'DEST': it is empty"),
    "export-into-nothing": (("export", " "), "'FOLDER': it is empty"),
    "home-nothing": (("--home", "", "status"), "'--home': it is empty"),
    "replay-into-nothing": (("replay", "--into", ""), "'--into': it is empty"),
    "import-nothing": (("import", "chat", ""), "'PATH': it is empty"),
}


@pytest.mark.parametrize(("args", "named"), REFUSED.values(), ids=REFUSED.keys())
def test_a_refused_value_is_one_error_line_with_exit_2(
    cli: Cli,
    mind_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    named: str,
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)  # where an empty path would have written
    file = tmp_path / "notes.txt"
    file.write_text("not a folder\n")
    before = ledger_digest(mind_home)

    result = cli(*(a.format(file=file) for a in args))

    assert result.exit_code == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert named in lines[0] and "Usage:" not in result.stderr
    assert ledger_digest(mind_home) == before
    assert not any(here.iterdir())
    assert cli("verify").exit_code == 0


def test_a_missing_argument_keeps_clicks_usage(cli: Cli, mind_home: Path) -> None:
    result = cli("export")

    assert result.exit_code == 2
    assert result.stderr.startswith("Usage: mind export")
    assert result.stderr.splitlines()[-1] == "Error: Missing argument 'FOLDER'."
