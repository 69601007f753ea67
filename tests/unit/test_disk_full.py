"""A full disk is said as such (mindledger/disk_full.py), whatever raised it: an errno, SQLite's
and DuckDB's words, or SQLite's unspecific "disk I/O error" when there is no room."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from mindledger import disk_full
from mindledger.disk_full import DISK_FULL_MESSAGE, is_disk_full
from mindledger.domain.errors import LedgerCorruptError
from mindledger.error_report import failure_message


def caused(outer: Exception, cause: BaseException) -> Exception:
    outer.__cause__ = cause
    return outer


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EFBIG, "File too large"),
        sqlite3.OperationalError("database or disk is full"),
        RuntimeError('IO Error: Could not write file "x": No space left on device'),
        caused(LedgerCorruptError("cannot append"), OSError(errno.EDQUOT, "quota")),
    ],
)
def test_the_words_of_a_full_disk_give_its_one_line(error: Exception, tmp_path: Path) -> None:
    assert is_disk_full([error, *([error.__cause__] if error.__cause__ else [])], tmp_path)
    assert failure_message(error, tmp_path) == DISK_FULL_MESSAGE


def test_a_disk_io_error_is_a_full_disk_only_without_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    error = LedgerCorruptError(
        "x/ledger.sqlite is not a readable mindledger ledger (disk I/O error)"
    )
    roomy = is_disk_full([error], tmp_path), failure_message(error, tmp_path)
    monkeypatch.setattr(disk_full, "NEARLY_FULL", 1 << 62)  # no disk has this much left

    assert roomy == (False, str(error))
    assert is_disk_full([error], tmp_path)


def test_other_failures_are_not_a_full_disk(tmp_path: Path) -> None:
    assert not is_disk_full([OSError(errno.EACCES, "Permission denied")], tmp_path)
    assert not is_disk_full([ValueError("the disk is fine")], None)
