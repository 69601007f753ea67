"""A full disk is said as such (mindledger/disk_full.py), whatever raised it: an errno, SQLite's
and DuckDB's words, or SQLite's unspecific "disk I/O error" when there is no room."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path
from uuid import UUID

import pytest

from mindledger import disk_full
from mindledger.disk_full import is_disk_full
from mindledger.domain.errors import LedgerCorruptError
from mindledger.domain.import_kept import MESSAGES, RECORDS, note_import_kept, noting_kept
from mindledger.domain.turn_kept import note_kept
from mindledger.error_report import failure_message


def caused(outer: Exception, cause: BaseException) -> Exception:
    outer.__cause__ = cause
    return outer


@pytest.mark.parametrize(
    ("error", "what", "fix"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "the disk is full", "free some space"),
        (OSError(errno.EFBIG, "File too large"), "the file size limit was reached", "ulimit -f"),
        (
            RuntimeError('IO Error: Could not write file "x": No space left on device'),
            "the disk is full",
            "free some space",
        ),
        (
            caused(LedgerCorruptError("cannot append"), OSError(errno.EDQUOT, "quota")),
            "the disk quota is used up",
            "raise the quota",
        ),
    ],
)
def test_the_words_of_a_full_disk_give_its_one_line(
    error: Exception, what: str, fix: str, tmp_path: Path
) -> None:
    assert is_disk_full([error, *([error.__cause__] if error.__cause__ else [])], tmp_path)
    said = failure_message(error, tmp_path)

    assert said.startswith(f"no space left to write in {tmp_path} ({what}): ")
    assert said.endswith(", then run the command again") and fix in said and "\n" not in said


def test_sqlite_s_words_name_the_limit_or_the_disk_as_they_stand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    error = sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(disk_full, "_size_limited", lambda: False)
    monkeypatch.setattr(disk_full, "NEARLY_FULL", 0)  # every disk has room
    roomy = failure_message(error, tmp_path)
    monkeypatch.setattr(disk_full, "NEARLY_FULL", 1 << 62)  # no disk has this much left
    full = failure_message(error, tmp_path)
    monkeypatch.setattr(disk_full, "_size_limited", lambda: True)
    both = failure_message(error, tmp_path)

    assert "(the disk is full, or the file size limit was reached)" in roomy
    assert "(the disk is full): free some space" in full
    assert "(the disk is full, or the file size limit was reached)" in both


def test_a_full_disk_after_a_turn_s_message_was_recorded_names_the_turn_that_keeps_it(
    tmp_path: Path,
) -> None:
    error = sqlite3.OperationalError("database or disk is full")
    note_kept(error, UUID("9dcf2820-8cd1-48a4-9100-bfc9424c64a1"))

    said = failure_message(error, tmp_path)

    assert "the message is kept as turn 9dcf28208cd148a49100bfc9424c64a1, unanswered" in said
    assert said.endswith("then run it again")


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
    assert failure_message(error, tmp_path).startswith("no space left to write in ")


def test_other_failures_are_not_a_full_disk(tmp_path: Path) -> None:
    assert not is_disk_full([OSError(errno.EACCES, "Permission denied")], tmp_path)
    assert not is_disk_full([ValueError("the disk is fine")], None)


def _output_failed(path: Path) -> Exception:
    """What writing the output `path` raises when a write fails past the file size limit."""
    from mindledger.output_paths import _cannot

    try:
        try:
            raise OSError(errno.EFBIG, "File too large")  # a write's error names no file
        except OSError as e:
            raise _cannot(path, "folder", e) from None
    except Exception as failed:
        return failed
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    "error",
    [
        _output_failed(Path("/srv/exports/tables/events.csv")),
        RuntimeError(
            'IO Error: Could not write file "/srv/exports/tables/events.csv": File too large'
        ),
        RuntimeError(  # an async write's, as a parquet export meets it
            'IO Error: Async write failed for range [offset=68, size=1926358]: {"exception_type":'
            '"IO","exception_message":"Could not write file \\"/srv/exports/tables/events.csv'
            '\\": File too large","errno":"27"}'
        ),
    ],
)
def test_a_full_disk_met_writing_an_output_names_the_output_not_the_home(
    error: Exception, tmp_path: Path
) -> None:
    said = failure_message(error, tmp_path)

    assert said.startswith(
        "no space left to write in /srv/exports/tables/events.csv (the file size limit was "
        "reached): raise the limit"
    ), said
    assert failure_message(error, tmp_path, full_path=False).startswith(
        "no space left to write in the mind's home ("
    )


@pytest.mark.parametrize(
    "temporary",
    [
        "/srv/exports/.tables.6v3qqer0.part/events.csv",  # an export's folder, being written
        "/srv/exports/readmodel.aside.duckdb.22905.tmp",  # a forget's read model, set aside
    ],
)
def test_a_full_disk_met_in_a_temporary_file_names_the_folder_it_is_in(
    temporary: str, tmp_path: Path
) -> None:
    error = RuntimeError(f'IO Error: Could not write file "{temporary}": File too large')

    said = failure_message(error, tmp_path)

    assert said.startswith("no space left to write in /srv/exports (the file size limit"), said


def test_a_full_disk_that_stopped_an_import_says_what_each_level_kept_and_to_run_it_again(
    tmp_path: Path,
) -> None:
    error = sqlite3.OperationalError("database or disk is full")
    note_import_kept(error, 499, MESSAGES)  # the conversation the disk filled in
    with pytest.raises(sqlite3.OperationalError), noting_kept(7, MESSAGES):  # ones before it
        raise error
    one = sqlite3.OperationalError("database or disk is full")
    note_import_kept(one, 1, RECORDS)
    note_import_kept(one, 0, MESSAGES)  # nothing saved: nothing said

    said = failure_message(error, tmp_path)
    said_one = failure_message(one, tmp_path, full_path=False)

    assert error.__notes__ == ["kept by this import before it stopped: 506 messages"]
    assert said.startswith(f"no space left to write in {tmp_path} (")
    assert said.endswith(
        "the import kept the 506 messages it had saved; free some space, then run the same "
        "import again (it adds only what is still missing)"
    )
    assert "in the mind's home" in said_one and "kept the 1 record it had saved;" in said_one
