"""The head anchor file only moves forward for one ledger and never breaks a write."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from mindledger.adapters.head_anchor import AnchorUnreadableError, HeadAnchorFile


def test_the_anchor_never_moves_back_for_the_same_ledger(tmp_path: Path) -> None:
    anchor = HeadAnchorFile(tmp_path / "ledger-head.json")

    anchor.advance("ledger-a", 5, "e" * 64)
    anchor.advance("ledger-a", 4, "d" * 64)  # a slower concurrent writer, finishing late

    kept = anchor.read()
    assert kept is not None and (kept.position, kept.hash) == (5, "e" * 64)


def test_a_new_ledger_in_the_home_replaces_the_old_anchor(tmp_path: Path) -> None:
    anchor = HeadAnchorFile(tmp_path / "ledger-head.json")
    anchor.advance("old-ledger", 9, "a" * 64)

    anchor.advance("new-ledger", 1, "b" * 64)

    kept = anchor.read()
    assert kept is not None and (kept.ledger_id, kept.position) == ("new-ledger", 1)


def test_an_anchor_that_cannot_be_written_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "ledger-head.json"
    target.mkdir()  # os.replace of a file over a directory fails

    HeadAnchorFile(target).advance("ledger-a", 1, "c" * 64)

    assert [p.name for p in tmp_path.iterdir()] == ["ledger-head.json"]


def test_an_empty_anchor_file_reads_as_none_and_takes_the_next_head(tmp_path: Path) -> None:
    target = tmp_path / "ledger-head.json"
    target.touch()  # a writer stopped between creating the file and writing its first record
    anchor = HeadAnchorFile(target)

    assert anchor.read() is None
    anchor.advance("ledger-a", 3, "f" * 64)

    kept = anchor.read()
    assert kept is not None and (kept.ledger_id, kept.position) == ("ledger-a", 3)


def test_a_shorter_record_over_a_longer_one_still_reads(tmp_path: Path) -> None:
    target = tmp_path / "ledger-head.json"
    anchor = HeadAnchorFile(target)
    anchor.advance("ledger-with-a-long-name", 123456, "a" * 64)

    anchor.advance("new", 1, "b" * 64)  # rewritten in place, padded: no truncate needed

    kept = anchor.read()
    assert kept is not None and (kept.ledger_id, kept.position, kept.hash) == ("new", 1, "b" * 64)


@pytest.mark.parametrize(
    "record",
    [
        "[" * 100_000 + "]" * 100_000,  # json.loads raised RecursionError
        '{"ledger_id": "a", "position": 1000000000000000000000000000000, "hash": "e"}',
        '{"ledger_id": "a", "position": 9223372036854775808, "hash": "e"}',
        '{"ledger_id": "a", "position": -1, "hash": "e"}',
        '{"ledger_id": "a", "position": 0, "hash": "e"}',
        '{"ledger_id": "a", "position": true, "hash": "e"}',
    ],
)
def test_a_record_that_holds_no_ledger_position_is_unreadable(tmp_path: Path, record: str) -> None:
    target = tmp_path / "ledger-head.json"
    target.write_text(record)

    with pytest.raises(AnchorUnreadableError):
        HeadAnchorFile(target).read()


def test_a_held_anchor_keeps_other_writers_out_until_released(tmp_path: Path) -> None:
    target = tmp_path / "ledger-head.json"
    held = HeadAnchorFile(target).hold()
    assert held is not None
    other = os.open(target, os.O_RDWR)

    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.advance("ledger-a", 2, "a" * 64)
        held.release()
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free once released
    finally:
        os.close(other)

    kept = HeadAnchorFile(target).read()
    assert kept is not None and kept.position == 2
