"""Read results a projector keeps beside its file until it writes a table they were read from.

A served mind's turns read the same rows turn after turn from tables that change only when an
event of their kind is projected: the mind's name, its settings, the conversations'
participants, the threads and their work. Each such read was a DuckDB statement per turn
(~0.3 ms of fixed cost however little it reads). They are kept here, each with the tables it
read, and dropped when a batch the projector commits writes one of those tables
(`Projector.apply` names them; `written`), so a kept result is always the one the statement
would return now. No other writer can change the file meanwhile: the projector's file is
written only under the projector lock, which the session holding this projector keeps for its
whole life (between turns too, `ReadSession.linger`); a `mind project`, a follower, a forget's
rebuild, a replay's swap or another process's catch-up must take the lock first, which closes
the session and this projector with it (same process) or waits until it has closed (another
process). What depends on the time of asking ("now") is never kept: callers keep the rows and
apply the time to them per read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Hashable
from datetime import datetime
from typing import Any, TypeVar

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.handlers import Rows

T = TypeVar("T")
# What every batch writes besides its entity and appended rows (`Projector._write`): the
# events, the tracking row, and the lexical index with its counts (a superset: dropping a kept
# read too often costs a statement, keeping one too long a wrong answer).
WRITTEN_EVERY_BATCH = ("events", "tracking", "docs", "doc_terms", "term_counts")
# The tracking row's document count, their total length and the position (BM25's N and average
# length, `retrieval.bm25`): every batch writes the row, so the projector keeps what it wrote
# (`KeptReads.keep`) rather than a read that every batch would drop.
INDEX_TOTALS = "SELECT docs, length, position FROM tracking WHERE name = 'main'"
# The document frequencies of the terms the projector counts (BM25's common terms), kept the same
# way: most batches add to some of them.
TRACKED_TERMS = "SELECT term, df FROM term_counts"


def written_by(rows: Rows) -> set[str]:
    """The tables a batch of `rows` writes (a superset), with "docs.<kind>" for each kind of
    document it indexes and "docs.live" when it supersedes any: a read of one kind's live
    documents needs dropping only then, not at every batch (each indexes messages)."""
    written = {*WRITTEN_EVERY_BATCH, *rows.entities, *rows.appended}
    written.update(f"docs.{kind}" for kind in set(rows.docs[1]))
    if rows.superseded:
        written.add("docs.live")
    return written


class KeptReads:
    """Results by key, each kept until one of the tables it was read from is written."""

    def __init__(self, last_event: Callable[[], datetime | None] = lambda: None) -> None:
        # The time of the last event the read model holds (None: not known), for reads whose
        # answer depends on it (`kept_threads`).
        self.last_event = last_event
        self._kept: dict[Hashable, tuple[frozenset[str], Any]] = {}
        self._guard = threading.Lock()  # a turn's reads run on two threads at once
        # Moves at every write: a read that overlapped one is not kept.
        self._writes = 0
        # Where a read of the newest rows may start (`retrieval.newest`): positions, never
        # results, so they are not dropped by writes (a stale one costs a statement).
        self.hints: dict[str, int] = {}

    def get(self, key: Hashable, tables: Collection[str], read: Callable[[], T]) -> T:
        """The result kept under `key`, else `read()` (kept under `key` with `tables`, the
        tables it reads)."""
        with self._guard:
            found = self._kept.get(key)
            writes = self._writes
        if found is not None:
            return found[1]  # type: ignore[no-any-return]
        value = read()
        with self._guard:
            if writes == self._writes:
                self._kept[key] = (frozenset(tables), value)
        return value

    def keep(self, key: Hashable, tables: Collection[str], value: Any) -> None:
        """Keep `value` under `key` as what reading `tables` returns now: the writer's own
        account of what it just wrote (kept until one of `tables` is written again)."""
        with self._guard:
            self._writes += 1  # a read under way began before: its result is not kept over this
            self._kept[key] = (frozenset(tables), value)

    def written(self, tables: Collection[str] | None = None) -> None:
        """Drop what was read from any of `tables` (None: everything kept)."""
        with self._guard:
            self._writes += 1
            if tables is None:
                self._kept.clear()
                return
            for key in [k for k, (read, _) in self._kept.items() if not read.isdisjoint(tables)]:
                del self._kept[key]

    def __len__(self) -> int:
        return len(self._kept)


def kept_rows(
    con: duckdb.DuckDBPyConnection, kept: KeptReads | None, sql: str, tables: Collection[str]
) -> list[tuple[Any, ...]]:
    """The rows of `sql` (a statement without parameters that reads `tables`), kept by `kept`
    when given (never changed by the caller: they are shared)."""
    if kept is None:
        return con.execute(sql).fetchall()
    return kept.get(sql, tables, lambda: con.execute(sql).fetchall())


# At most this many values are kept for `may_match`: a mind with more sends its lookups as
# before, rather than holding them all and reading them all again after every write to their
# table. bench.turns' 100k-event mind has 21,429 concept names: kept, 2.1 MB and 5.5 ms of CPU
# to read once per concept written, against a lookup of 1.1 ms of CPU every turn.
MAY_MATCH_VALUES = 250_000


def may_match(
    con: duckdb.DuckDBPyConnection,
    kept: KeptReads | None,
    sql: str,
    tables: Collection[str],
    wanted: Collection[Any],
) -> bool:
    """Whether any of `wanted` is among the values `sql` (one column, no parameters) reads:
    False means a lookup of them in that column finds nothing, without sending it. Without
    `kept`, or with more than `MAY_MATCH_VALUES` values, always True (the lookup decides)."""
    if kept is None:
        return True

    def read() -> frozenset[Any] | None:
        found = con.execute(f"{sql} LIMIT {MAY_MATCH_VALUES + 1}").fetchall()
        return None if len(found) > MAY_MATCH_VALUES else frozenset(v for (v,) in found)

    values = kept.get(("values", sql), tables, read)
    return values is None or any(w in values for w in wanted)
