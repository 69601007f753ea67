"""`mind backup DEST` on the command line: what it prints, and every refusal is one line that
leaves the home and DEST's folder exactly as they were."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]


def _tree(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every file under `roots`, with its size and modification time (to see any write)."""
    found: dict[str, tuple[int, int]] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            stat = path.lstat()
            found[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return found


def _refused(result: Result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 1, result.stderr
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output + result.stderr
    return lines[0]


def test_backup_prints_what_it_copied_and_the_copy_verifies(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    assert cli("commit", "Send the weekly report on Friday").exit_code == 0
    dest = tmp_path / "echo-backup"

    done = cli("backup", str(dest), "--json").json()
    said = cli("backup", str(tmp_path / "second"))

    assert done["dest"] == str(dest)
    assert done["events"] == 2 and done["verified"] is True
    assert done["files"] == ["keys.sqlite", "ledger-head.json", "ledger.sqlite"]
    assert said.exit_code == 0
    assert said.output.startswith(f"backed up 2 events to {tmp_path / 'second'} (")
    assert said.output.rstrip().endswith("s")
    copied = cli("--home", str(dest), "commitments", "--json").json()
    assert [c["text"] for c in copied] == ["Send the weekly report on Friday"]
    assert cli("--home", str(dest), "verify", "--json").json()["ok"] is True


def test_backup_into_an_existing_empty_folder_takes_its_place(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "empty"
    dest.mkdir(mode=0o755)

    done = cli("backup", str(dest), "--json")

    assert done.exit_code == 0, done.stderr
    assert dest.stat().st_mode & 0o777 == 0o700
    assert (dest / "ledger.sqlite").stat().st_mode & 0o777 == 0o600


def test_missing_parent_folders_are_made_private(cli: Cli, mind_home: Path, tmp_path: Path) -> None:
    dest = tmp_path / "backups" / "2026" / "echo"

    done = cli("backup", str(dest))

    assert done.exit_code == 0, done.stderr
    assert (tmp_path / "backups").stat().st_mode & 0o777 == 0o700
    assert cli("--home", str(dest), "verify", "--json").json()["ok"] is True


def test_settings_files_go_with_the_backup(cli: Cli, mind_home: Path, tmp_path: Path) -> None:
    (mind_home / "config.json").write_text('{"lock_timeout": 7}')
    (mind_home / ".env").write_text("OPENAI_API_KEY=sk-test-not-a-key\n")

    done = cli("backup", str(tmp_path / "b"), "--json").json()

    assert done["files"] == [
        ".env",
        "config.json",
        "keys.sqlite",
        "ledger-head.json",
        "ledger.sqlite",
    ]
    assert (tmp_path / "b" / "config.json").read_text() == '{"lock_timeout": 7}'
    assert (tmp_path / "b" / ".env").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("dest", "said"),
    [
        ("{full}", "exists and is not empty"),
        ("{home}", "inside this mind's home"),
        ("{home}/copies/today", "inside this mind's home"),
        ("{home}/../mind/run", "inside this mind's home"),
        ("{file}", "exists and is not a folder"),
        ("{file}/below", "is not a folder"),
        ("{file}/below/deeper", "is not a folder"),
        ("{link}", "symbolic link"),
    ],
)
def test_a_dest_that_cannot_take_a_backup_is_refused_in_one_line_and_nothing_is_written(
    cli: Cli, mind_home: Path, tmp_path: Path, dest: str, said: str
) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    (tmp_path / "file").write_text("a file")
    os.symlink(tmp_path / "full", tmp_path / "link")
    places = {"full": "full", "file": "file", "link": "link"}
    named = dest.format(
        home=mind_home, tmp=tmp_path, **{k: tmp_path / v for k, v in places.items()}
    )
    before = _tree(tmp_path)

    line = _refused(cli("backup", named))

    assert said in line
    assert _tree(tmp_path) == before


def test_a_home_with_no_mind_is_refused(cli: Cli, home: Path, tmp_path: Path) -> None:
    line = _refused(cli("backup", str(tmp_path / "b")))

    assert "mind init" in line
    assert not (tmp_path / "b").exists()


def test_a_postgresql_mind_is_told_to_use_pg_dump_without_a_connection(
    cli: Cli, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_BACKEND", "postgres")
    monkeypatch.setenv("MIND_POSTGRES_DSN", "postgresql://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("MIND_POSTGRES_SCHEMA", "echo")

    line = _refused(cli("backup", str(tmp_path / "b")))

    assert "pg_dump --schema=echo" in line
    assert not (tmp_path / "b").exists()


def test_help_teaches_with_an_example(cli: Cli) -> None:
    shown = cli("backup", "--help").output

    assert "Example:" in shown and "mind backup ~/backups/" in shown


def test_a_dest_with_a_line_break_is_shown_on_one_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "bk\nx"

    result = cli("backup", str(dest))

    assert result.exit_code == 0, result.stderr
    assert result.output.count("\n") == 1 and "bk\\nx" in result.output
    assert cli("--home", str(dest), "verify").exit_code == 0
