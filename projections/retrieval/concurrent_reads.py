"""Independent reads of one read model run on two connections at once.

A turn's context is ~20 small read statements. Each costs DuckDB a fixed 0.3-1.5 ms to plan
and schedule however little it reads, and DuckDB releases the GIL while it executes, so two
cursors of the same attached file, fed from one queue, finish a turn's reads in about 60% of
the time one cursor takes (12 small statements: 4.5 against 7.6 ms on 2 cores). The results
come back in the order the reads were given, whichever connection ran them: what a caller
builds from them does not depend on the scheduling.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.duckdb_files import sibling

Read = Callable[[duckdb.DuckDBPyConnection], Any]

# One helper thread per process runs the second connection's share (what a ThreadPoolExecutor
# of one worker did: `concurrent.futures` imports `logging`, ~4 ms of a one-shot turn's CPU).
_guard = threading.Lock()
_jobs: queue.SimpleQueue[Callable[[], None]] | None = None
_owner = 0  # a forked child starts a helper of its own


def _help(jobs: queue.SimpleQueue[Callable[[], None]]) -> None:
    while True:
        jobs.get()()


def _to_helper(job: Callable[[], None]) -> None:
    global _jobs, _owner
    with _guard:
        if _jobs is None or _owner != os.getpid():
            _jobs = queue.SimpleQueue()
            helper = threading.Thread(target=_help, args=(_jobs,), name="mind-read", daemon=True)
            helper.start()
            _owner = os.getpid()
        _jobs.put(job)


def run_reads(con: duckdb.DuckDBPyConnection, reads: Sequence[Read]) -> list[Any]:
    """Run `reads` (each given a connection) on `con` and on a second connection to the same
    database, longest first if given so; returns their results in the order given. The first
    failure is raised once both connections are idle."""
    results: list[Any] = [None] * len(reads)
    queue = iter(enumerate(reads))
    lock = threading.Lock()
    stop = threading.Event()

    def drain(cursor: duckdb.DuckDBPyConnection) -> None:
        while not stop.is_set():
            with lock:
                step = next(queue, None)
            if step is None:
                return
            i, read = step
            try:
                results[i] = read(cursor)
            except BaseException:
                stop.set()
                raise

    if len(reads) < 2:
        drain(con)
        return results
    other = sibling(con)
    failures: list[BaseException] = []
    done = threading.Event()

    def helped() -> None:
        try:
            drain(other)
        except BaseException as e:
            failures.append(e)
        finally:
            done.set()

    try:
        _to_helper(helped)
        try:
            drain(con)
        finally:
            done.wait()  # `other` is closed only once it is idle
        if failures:
            raise failures[0]
    finally:
        other.close()
    return results
