"""An import the disk fills part of the way through keeps the batches it saved (each is a
transaction) and says so in its one line: how much was kept, and that the same import run
again adds the rest (and nothing twice). The full disk is injected: SQLite's own error, raised
by the ledger's insert at a chosen batch (a real full disk's timing depends on sizes)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.sqlite_ledger import ChainedSQLiteRecorder
from tests.conftest import Result
from tests.foreign_files import branching_conversation, chatgpt_zip, pmm_ledger, write_json

Cli = Callable[..., Result]
LINES = 1200  # a transcript of three batches (500 events each)
KEPT_LINE = re.compile(
    # SQLite's words name no cause: the disk, or the limit (neither is, in this test)
    r"Error: no space left to write in (?P<home>/\S+) \(the disk is full(?:, or the file size "
    r"limit was reached)?\): the import kept "
    r"the (?P<count>\d+) (?P<unit>messages|records) it had saved; free some space, then run "
    r"the same import again \(it adds only what is still missing\)\n"
)


@contextmanager
def full_at(insert: int) -> Iterator[None]:
    """Within the block, the ledger's `insert`-th insert (1 is the next) meets a full disk, as
    SQLite says it; every insert before it is written."""
    real = ChainedSQLiteRecorder._insert_events
    calls = [0]

    def insert_events(self: ChainedSQLiteRecorder, c: Any, events: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == insert:
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, c, events, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ChainedSQLiteRecorder, "_insert_events", insert_events)
        yield


def observed(home: Path) -> int:
    """The messages from imports the ledger holds (read from its file)."""
    con = sqlite3.connect(f"file:{home / 'ledger.sqlite'}?mode=ro", uri=True)
    try:
        topic = "%conversation.message_observed%"
        query = "SELECT count(*) FROM stored_events WHERE topic LIKE ?"
        return int(con.execute(query, (topic,)).fetchone()[0])
    finally:
        con.close()


def said_kept(failed: Result, home: Path) -> tuple[int, str]:
    """(count, unit) the one line of an import that found no room says it kept."""
    assert failed.exit_code == 1 and failed.output == "", failed.stderr
    line = KEPT_LINE.fullmatch(failed.stderr)
    assert line is not None, failed.stderr
    assert line.group("home") == str(home)
    return int(line.group("count")), line.group("unit")


def transcript(path: Path, lines: int) -> Path:
    path.write_text(
        "".join(
            json.dumps({"role": "user" if i % 2 else "assistant", "content": f"Buoy {i} is red"})
            + "\n"
            for i in range(lines)
        )
    )
    return path


def test_a_chat_import_stopped_by_a_full_disk_says_what_it_kept_and_the_same_import_adds_the_rest(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    path = transcript(tmp_path / "long.jsonl", LINES)

    with full_at(3):
        failed = cli("import", "chat", str(path))
    kept = observed(mind_home)
    again = cli("import", "chat", str(path), "--json")
    once_more = cli("import", "chat", str(path), "--json")

    assert said_kept(failed, mind_home) == (kept, "messages")
    assert 0 < kept < LINES
    assert again.exit_code == 0, again.stderr
    assert (again.json()["added"], again.json()["skipped"]) == (LINES - kept, kept)
    assert (once_more.json()["added"], observed(mind_home)) == (0, LINES)
    assert cli("verify", "--json").json()["ok"] is True


def test_a_full_disk_in_a_later_conversation_counts_the_ones_before_it(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    samples = [
        {
            "sample_id": f"s{n}",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1_date_time": "10:00 am on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ana" if i % 2 else "Ben", "dia_id": f"D1:{i}", "text": f"Kite {i}"}
                    for i in range(1, 8)
                ],
            },
            "qa": [],
        }
        for n in (1, 2)
    ]
    path = write_json(tmp_path / "locomo.json", samples)

    with full_at(2):  # the first sample is one insert, the second meets the full disk
        failed = cli("import", "locomo", str(path))
    kept = observed(mind_home)
    again = cli("import", "locomo", str(path), "--json")

    assert said_kept(failed, mind_home) == (kept, "messages") == (7, "messages")
    assert [s["added"] for s in again.json()] == [0, 7]


def test_a_full_disk_in_a_later_chatgpt_conversation_counts_the_ones_before_it(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    exported = [branching_conversation("conv-1"), branching_conversation("conv-2")]
    path = chatgpt_zip(tmp_path / "export.zip", exported)

    with full_at(2):  # the first conversation is one insert, the second meets the full disk
        failed = cli("import", "chatgpt", str(path))
    kept = observed(mind_home)
    again = cli("import", "chatgpt", str(path), "--json")

    assert said_kept(failed, mind_home) == (kept, "messages")
    assert kept > 0 and (again.json()["added"], again.json()["skipped"]) == (kept, kept)


def test_a_pmm_import_stopped_by_a_full_disk_counts_the_records_it_kept(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    said = [("user_message", f"The tide is {n} feet", {"role": "user"}) for n in range(600)]
    path = write_json(tmp_path / "pmm.json", pmm_ledger(said))

    with full_at(3):  # two batches of 250 records are written
        failed = cli("import", "pmm", str(path))
    again = cli("import", "pmm", str(path), "--json")

    assert said_kept(failed, mind_home) == (500, "records")
    assert (again.json()["added"], again.json()["skipped"]) == (100, 500)


def test_an_import_the_disk_stops_before_its_first_batch_says_only_to_run_it_again(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    path = transcript(tmp_path / "short.jsonl", 4)

    with full_at(1):
        failed = cli("import", "chat", str(path))

    assert failed.exit_code == 1
    assert failed.stderr.endswith("): free some space, then run the command again\n")
    assert "kept" not in failed.stderr and observed(mind_home) == 0
