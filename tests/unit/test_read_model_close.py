"""Closing a read-model file: kept, its large WAL is checkpointed into it; a scratch file that
is deleted next is closed as it is (`mind verify --export`'s trial read model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _duckdb import DuckDBPyConnection

from mindledger.projections.engine.duckdb_files import (
    WAL_CHECKPOINT_BYTES,
    close,
    connect,
    wal_bytes,
)


def _written(path: Path) -> DuckDBPyConnection:
    con = connect(path)
    con.execute("CREATE TABLE notes (n BIGINT, text VARCHAR)")
    for start in range(0, 20_000, 1000):  # small inserts, as a catch-up's: logged in the WAL
        con.execute(
            "INSERT INTO notes SELECT range, 'note number ' || range FROM range(?, ?)",
            [start, start + 1000],
        )
    assert wal_bytes(path) > WAL_CHECKPOINT_BYTES
    return con


@pytest.mark.parametrize(("keep", "wal_left"), [(True, False), (False, True)])
def test_closing_checkpoints_a_large_wal_only_when_the_file_is_kept(
    tmp_path: Path, keep: bool, wal_left: bool
) -> None:
    path = tmp_path / "read.duckdb"
    con = _written(path)

    close(con, keep=keep)

    assert (wal_bytes(path) > 0) is wal_left
