"""The folder an export (or a backup) goes into: never through a symbolic link, never `-`, never
inside the home; one made or found empty ends up 0700, since its files carry the mind's words
and keys. Each refusal is one line, with nothing written and the home unchanged."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]
FORMATS = ["jsonl", "md", "csv", "parquet"]


def one_error_line(result: Result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and "Traceback" not in result.stderr
    return lines[0]


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder` (links not followed): a file's bytes, else its kind."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = f"link to {os.readlink(path)}"
        elif path.is_file():
            found[name] = path.read_bytes()
        else:
            found[name] = "folder"
    return found


@pytest.fixture
def with_events(cli: Cli, mind_home: Path) -> Path:
    assert cli("commit", "Water the ficus on Fridays").exit_code == 0
    assert cli("commitments").exit_code == 0  # the read model is built
    return mind_home


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_export_into_a_symlinked_folder_is_refused_and_writes_nothing_there(
    cli: Cli, with_events: Path, tmp_path: Path, fmt: str
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    home_before = tree(with_events)

    result = cli("export", "--format", fmt, str(tmp_path / "link"))

    assert result.exit_code == 1
    assert "symbolic link" in one_error_line(result)
    assert list(real.iterdir()) == []
    assert tree(with_events) == home_before


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_export_into_a_symlink_to_a_file_is_refused_as_a_link_and_leaves_the_file(
    cli: Cli, with_events: Path, tmp_path: Path, fmt: str
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    (tmp_path / "link").symlink_to(notes)
    home_before = tree(with_events)

    result = cli("export", "--format", fmt, str(tmp_path / "link"))

    assert result.exit_code == 1
    assert one_error_line(result) == (
        f"Error: FOLDER {tmp_path / 'link'} is a symbolic link (to {notes}); name the folder itself"
    )
    assert notes.read_text() == "mine"
    assert tree(with_events) == home_before


@pytest.mark.parametrize("command", [("backup",), ("export", "--format", "csv")])
def test_a_dash_is_refused_as_a_folder_and_no_folder_named_dash_is_made(
    cli: Cli,
    with_events: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: tuple[str, ...],
) -> None:
    monkeypatch.chdir(tmp_path)
    home_before = tree(with_events)

    result = cli(*command, "-")

    assert result.exit_code == 1
    assert "standard output, not a folder" in one_error_line(result)
    assert not (tmp_path / "-").exists()
    assert tree(with_events) == home_before


@pytest.mark.parametrize(
    "args",
    [
        ("export", "--format", "csv", "{home}/tables"),
        ("export", "--format", "jsonl", "{home}/workspace/out"),
        ("export", "--format", "md", "{home}/../mind/logs"),
        ("graph", "export", "--out", "{home}/keys.sqlite"),
        ("graph", "export", "--out", "{home}/notes.graphml"),
        ("report", "activity", "--format", "csv", "--out", "{home}/forget.lock"),
        ("replay", "--into", "{home}/workspace/copy.duckdb"),
    ],
    ids=["tables", "jsonl-workspace", "md-dotdot", "graph-keys", "graph-new", "report", "replay"],
)
def test_any_output_inside_the_home_is_refused_and_the_home_kept(
    cli: Cli, with_events: Path, args: tuple[str, ...]
) -> None:
    (with_events / "workspace").mkdir(mode=0o700, exist_ok=True)  # private, as the home is
    home_before = tree(with_events)

    result = cli(*(a.format(home=with_events) for a in args))

    assert result.exit_code == 1
    assert "this mind's own home" in one_error_line(result)
    assert tree(with_events) == home_before
    assert cli("verify").exit_code == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_folder_that_takes_an_export_is_made_private(
    cli: Cli, with_events: Path, tmp_path: Path, fmt: str
) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    folder.chmod(0o755)

    result = cli("export", "--format", fmt, str(folder))

    assert result.exit_code == 0, result.stderr
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()} == {0o600}


def test_a_new_export_folder_is_private_and_a_shared_one_keeps_its_mode(
    cli: Cli, with_events: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("mine")
    shared.chmod(0o755)

    made = cli("export", "--format", "jsonl", str(tmp_path / "new" / "exports"))
    into_shared = cli("export", "--format", "jsonl", str(shared))

    assert (made.exit_code, into_shared.exit_code) == (0, 0)
    assert stat.S_IMODE((tmp_path / "new" / "exports").stat().st_mode) == 0o700
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755  # the user's folder, their files in it
    assert stat.S_IMODE((shared / "ledger.jsonl").stat().st_mode) == 0o600
    assert (shared / "notes.txt").read_text() == "mine"


def test_an_export_folder_that_is_a_file_is_refused_by_the_floor_before_any_work(
    with_events: Path, tmp_path: Path
) -> None:
    import mindledger
    from mindledger.domain.errors import InvalidInputError

    (tmp_path / "taken").write_text("a file")

    with (
        mindledger.open(with_events) as mind,
        pytest.raises(InvalidInputError, match="not a folder"),
    ):
        mind.export(tmp_path / "taken", "jsonl")

    assert (tmp_path / "taken").read_text() == "a file"
