"""`one_thread`: the shared DuckDB instance on one thread while a bulk catch-up writes.

A bulk catch-up is a run of single statements (an insert per table per batch, a commit, a
checkpoint) from one thread. With DuckDB's default pool (a thread per core), its workers
spent 0.3-0.6 s of CPU per 100k events beside the applying thread, of which the applying
thread took back only about half when they were gone (`SET threads = 1`: the process's CPU
2.5 -> 2.2 s on the same catch-up). `threads` is an instance's setting (DuckDB refuses it for
one connection), and the instance is the process's (`duckdb_files`): a query of another thread
that runs meanwhile (a served recall while an import is caught up) runs on its own thread
only, and gets the pool back when the last bulk catch-up ends. A turn's catch-up (a few
events) and every read outside a bulk catch-up keep the pool. The blocks are counted, so
that concurrent catch-ups restore it only when the last one ends.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.duckdb_files import shared

_lock = threading.Lock()
_blocks = 0
_threads_before = 0  # the pool's size when the first block began


@contextlib.contextmanager
def one_thread(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """DuckDB's shared instance on one thread for the block (a connection of an instance of
    its own, a scratch file's, is left as it is); its pool back when the last block ends."""
    global _blocks, _threads_before
    if not shared(con):
        yield
        return
    with _lock:
        if _blocks == 0:
            _threads_before = _set_threads(con, 1)
        _blocks += 1
    try:
        yield
    finally:
        with _lock:
            _blocks -= 1
            if _blocks == 0:
                _set_threads(con, _threads_before)


def _set_threads(con: duckdb.DuckDBPyConnection, threads: int) -> int:
    """Set the instance's pool size; returns the size it had. Through a connection of its
    own: `con` may be in a transaction a failure left aborted, which refuses any statement."""
    other = con.cursor()
    try:
        ((before,),) = other.execute("SELECT current_setting('threads')").fetchall()
        other.execute(f"SET threads = {threads}")
        return int(before)
    finally:
        other.close()
