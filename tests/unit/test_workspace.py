"""The workspace adapter: which files count as evidence of work."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mindledger.adapters.workspace import FileWorkspace
from mindledger.domain.errors import MindError

BEFORE = datetime(2020, 1, 1, tzinfo=UTC)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "a.md").write_text("a")
    return folder


def test_a_file_changed_after_the_cycle_started_counts(root: Path) -> None:
    assert FileWorkspace(root).changed_file("notes/a.md", BEFORE) == "notes/a.md"
    assert FileWorkspace(root).changed_file("./notes//a.md", BEFORE) == "notes/a.md"


def test_an_unchanged_file_does_not(root: Path) -> None:
    os.utime(root / "notes" / "a.md", (1_500_000_000, 1_500_000_000))  # 2017

    with pytest.raises(MindError, match="before this cycle started"):
        FileWorkspace(root).changed_file("notes/a.md", BEFORE)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/hosts", "is absolute"),
        ("notes/../../secret", "uses '..'"),
        ("", "non-empty"),
        ("notes/missing.md", "no file"),
        ("notes", "no file"),
    ],
)
def test_escapes_and_missing_files_are_refused(root: Path, path: str, message: str) -> None:
    with pytest.raises(MindError, match=message):
        FileWorkspace(root).changed_file(path, BEFORE)


def test_the_minds_own_files_never_count(tmp_path: Path) -> None:
    (tmp_path / "ledger.sqlite").write_text("x")
    (tmp_path / "other.txt").write_text("x")

    workspace = FileWorkspace(tmp_path, protected=(tmp_path / "other.txt",))

    for name in ("ledger.sqlite", "other.txt"):
        with pytest.raises(MindError, match="ledger or journal"):
            workspace.existing_file(name)


def test_a_protected_file_is_resolved_when_a_path_is_checked(tmp_path: Path) -> None:
    # The workspace is built every turn and resolves its protected paths only when a reply
    # cites a file: a link made in between still leads to a protected file.
    (tmp_path / "ledger.db").write_text("x")
    workspace = FileWorkspace(tmp_path, protected=(tmp_path / "kept",))
    (tmp_path / "kept").symlink_to(tmp_path / "ledger.db")

    with pytest.raises(MindError, match="ledger or journal"):
        workspace.existing_file("ledger.db")
