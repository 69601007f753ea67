"""Rows of a table by ledger position, kept by a session between turns.

A turn reads the same few hundred rows by position turn after turn: the lexical hits' kinds in
`docs` (~1-3 ms of CPU at 100k-1M events: a semi-join over the whole table however few it
takes) and the messages around the hits in `messages` (~1-1.7 ms). The row at a position is
written once, with its event, and never rewritten while the projector holds the lock (a
forget's rebuild or a replay's swap must take it first, which closes the session and its kept
reads): only `docs.live` changes in place, and the projector names it when it does
(`written_by`). So a session keeps the rows it read, and reads only positions it has not seen;
those the last turns added are read as the table's tail since the last read (one range of the
position-ordered table: ~0.5 ms), and their absence is kept too. No position past the read
model's (`upto`) has a row yet, so none is read or kept as absent.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.kept_reads import INDEX_TOTALS, KeptReads, kept_rows

# At most this many positions are kept per table; past it they are read again from scratch.
KEPT_POSITIONS = 20_000
# The tail since the last read is read whole up to this many positions (a batch of a few turns'
# events); a longer one (an import the session caught up) only at the positions wanted.
TAIL_POSITIONS = 2_000
Row = tuple[Any, ...]


class PositionRows:
    """The rows `select` reads (its first column the position, `column`, unique; ending in a
    WHERE clause), by position, as read so far."""

    def __init__(self, select: str, column: str = "position") -> None:
        self.select, self.column = select, column
        self.rows: dict[int, Row | None] = {}
        self.read_to: int | None = None  # the read model's position at the last read
        self._guard = threading.Lock()

    def read(
        self, con: duckdb.DuckDBPyConnection, positions: Iterable[int], upto: int
    ) -> dict[int, Row]:
        """The rows at `positions` (at most `upto`, the read model's position), by position, a
        position without one left out; those not kept read in one statement."""
        wanted = {p for p in positions if p <= upto}
        with self._guard:
            known = {p: self.rows[p] for p in wanted if p in self.rows}
            start = self.read_to
        missing = sorted(wanted - known.keys())
        if not missing:
            return {p: r for p, r in known.items() if r is not None}
        tail = start is not None and start < missing[-1] and upto - start <= TAIL_POSITIONS
        at = [p for p in missing if not tail or p <= start]  # type: ignore[operator]
        parts: list[str] = []
        params: list[Any] = []
        if at:
            parts.append(f"{self.select} {self.column} IN (SELECT unnest(?))")
            params.append(at)
        if tail:
            parts.append(f"{self.select} {self.column} > ? AND {self.column} <= ?")
            params += [start, upto]
        found = con.execute(" UNION ALL ".join(parts), params).fetchall()
        read: dict[int, Row | None] = dict.fromkeys(at)
        if tail:
            read.update(dict.fromkeys(range(start + 1, upto + 1)))  # type: ignore[operator]
        read.update((r[0], r) for r in found)
        known.update((p, read[p]) for p in missing)
        with self._guard:
            if len(self.rows) + len(read) > KEPT_POSITIONS:
                self.rows.clear()
                self.read_to = None
            self.rows.update(read)
            # What lies past it is new: below, a position not kept is read at itself.
            self.read_to = max(upto, self.read_to or 0)
        return {p: r for p, r in known.items() if r is not None}


def rows_at(
    con: duckdb.DuckDBPyConnection,
    kept: KeptReads | None,
    select: str,
    tables: Collection[str],
    positions: Iterable[int],
    column: str = "position",
) -> dict[int, Row]:
    """The rows of `select` (as `PositionRows`) at `positions`, by position: kept by the
    session (`kept`) until one of `tables` (what can change a row in place) is written; without
    `kept`, read."""
    if kept is None:
        return PositionRows(select, column).read(con, positions, NO_LIMIT)
    ((_, _, upto),) = kept_rows(con, kept, INDEX_TOTALS, ("tracking",))
    store = kept.get(("position_rows", select), tables, lambda: PositionRows(select, column))
    return store.read(con, positions, upto or 0)


NO_LIMIT = 2**62
