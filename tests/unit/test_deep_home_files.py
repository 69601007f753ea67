"""A home's small JSON files nested too deeply for the parser (a damaged or edited file) read as
unreadable, as any other damage does: json.loads raised RecursionError, and `mind status`,
`mind recall` and `mind commit` ended in "unexpected failure"."""

from __future__ import annotations

from pathlib import Path

from mindledger.projections.engine.summary import read_summary, summary_path
from mindledger.server_files import (
    INFO_FILE,
    copied_from_served_home,
    read_info,
    remove_if_ours,
    server_record,
)

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_read_model_summary_nested_too_deeply_is_no_summary(tmp_path: Path) -> None:
    working = tmp_path / "readmodel.duckdb"
    summary_path(working).write_text(DEEP)

    assert read_summary(working) is None


def test_a_server_record_nested_too_deeply_is_a_stale_one(tmp_path: Path) -> None:
    (tmp_path / INFO_FILE).write_text(DEEP)

    assert read_info(tmp_path) is None
    assert server_record(tmp_path) == (None, True)
    assert copied_from_served_home(tmp_path) is None
    remove_if_ours(tmp_path / INFO_FILE)
    assert (tmp_path / INFO_FILE).exists()  # not this process's record: left
