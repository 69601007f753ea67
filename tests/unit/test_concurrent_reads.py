"""`run_reads`: a read model's independent reads on two connections, results in the order given,
the first failure raised once both connections are idle."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mindledger.projections.engine.duckdb_files import close, connect
from mindledger.projections.retrieval.concurrent_reads import Read, run_reads


def doubled(n: int, ran_on: set[str]) -> Read:
    def read(cursor: Any) -> Any:
        ran_on.add(threading.current_thread().name)
        return cursor.execute("SELECT n * 2 FROM t WHERE n = ?", [n]).fetchall()[0][0]

    return read


def test_results_come_back_in_the_order_given_whichever_connection_ran_them(
    tmp_path: Path,
) -> None:
    con = connect(tmp_path / "rm.duckdb")
    ran_on: set[str] = set()
    try:
        con.execute("CREATE TABLE t AS SELECT range AS n FROM range(100)")
        for _ in range(3):  # the helper thread is kept for the next call
            reads = [doubled(n, ran_on) for n in range(40)]
            assert run_reads(con, reads) == [2 * n for n in range(40)]
        assert run_reads(con, [doubled(7, ran_on)]) == [14]  # one read: on `con` alone
    finally:
        close(con)
    assert threading.current_thread().name in ran_on


def test_a_failing_read_is_raised_and_the_connection_reads_on(tmp_path: Path) -> None:
    con = connect(tmp_path / "rm.duckdb")

    def slow(cursor: Any) -> Any:
        return cursor.execute("SELECT count(*) FROM range(200000)").fetchall()

    def bad(cursor: Any) -> Any:
        raise ValueError("no such thing")

    try:
        with pytest.raises(ValueError, match="no such thing"):
            run_reads(con, [slow, bad, slow, slow])
        assert run_reads(con, [lambda c: c.execute("SELECT 1").fetchall()] * 2) == [[(1,)]] * 2
    finally:
        close(con)
