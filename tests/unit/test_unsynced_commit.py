"""A small batch's commit without waiting for the disk leaves the instance's mode as it was."""

from __future__ import annotations

import _duckdb as duckdb
import pytest

from mindledger.projections.engine.duckdb_files import close, commit, connect


def _mode(con: duckdb.DuckDBPyConnection) -> str:
    ((mode,),) = con.execute("SELECT current_setting('fsync_mode')").fetchall()
    return str(mode).lower()


def test_an_unsynced_commit_commits_and_restores_the_mode_in_its_one_call() -> None:
    con = connect()
    con.execute("CREATE TABLE t (a INTEGER)")
    con.execute("BEGIN TRANSACTION; INSERT INTO t VALUES (1)")

    commit(con, synced=False)

    assert con.execute("SELECT a FROM t").fetchall() == [(1,)]
    assert _mode(con) == "standard"
    close(con)


def test_a_failing_unsynced_commit_still_restores_the_mode() -> None:
    con = connect()

    with pytest.raises(duckdb.TransactionException):
        commit(con, synced=False)  # no transaction is open

    assert _mode(con) == "standard"
    close(con)
