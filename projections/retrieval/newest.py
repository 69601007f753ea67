"""The newest few rows of a table in ledger order, read from where a session's last answer began.

A turn reads the newest few rows of some tables (the latest messages, the newest open
commitments' documents) with `ORDER BY position DESC LIMIT k`: a top-N plan, which DuckDB (1.3+)
runs as a join back to the table for the other columns ("late materialization") over every row
group, ~0.8 ms of CPU at 100k events and ~1.3 ms at 1M for 6 or 10 rows. A session keeps the
position its last answer began at (`KeptReads.hints`): the rows from there on are read as they
lie, in one pass over the tail row groups (~0.4 ms), and ordered here. When there are at least k
of them they hold the answer, whatever was written meanwhile (every row before the hint lies
below all of them); when fewer (rows deleted or superseded since) or too many, the ordered read
runs. A hint is never a result, so a stale one costs a statement, never a wrong answer.
"""

from __future__ import annotations

from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.kept_reads import KeptReads

# At most this many rows are read from the hint on; more (a large import caught up by the same
# session between two turns) and the ordered read runs instead.
TAIL_ROWS = 1000


def newest(
    con: duckdb.DuckDBPyConnection,
    kept: KeptReads | None,
    key: str,
    select: str,
    params: list[Any],
    k: int,
) -> list[tuple[Any, ...]]:
    """The rows of `select` (its first column `position`, unique; ending in a WHERE clause,
    parameters `params`) with the k highest positions, highest first: what
    `{select} ORDER BY position DESC LIMIT k` returns. `kept`: the session's kept reads, whose
    hint under `key` says where to start (none: the ordered read, which leaves a hint)."""
    start = kept.hints.get(key) if kept is not None else None
    if start is not None:
        tail = con.execute(
            f"{select} AND position >= ? LIMIT {TAIL_ROWS + 1}", [*params, start]
        ).fetchall()
        if k <= len(tail) <= TAIL_ROWS:
            found = sorted(tail, key=lambda r: r[0], reverse=True)[:k]
            kept.hints[key] = found[-1][0]  # type: ignore[union-attr]
            return found
    found = con.execute(f"{select} ORDER BY position DESC LIMIT {int(k)}", params).fetchall()
    if kept is not None and found and len(found) == k:
        kept.hints[key] = found[-1][0]
    return found
