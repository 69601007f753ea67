"""The read side as a turn's ContextSource: every call reads a read model that includes the
ledger head at the moment of the call."""

from __future__ import annotations

from domain.context_port import AssembledContext, UnfinishedTurn
from projections.context import candidates, fit
from projections.ports import LedgerReader
from projections.readmodel import ReadModelPaths, open_read_model


class ReadModelContextSource:
    """Context for turns, from the DuckDB read models."""

    def __init__(self, paths: ReadModelPaths, reader: LedgerReader) -> None:
        self.paths = paths
        self.reader = reader

    def next_seq(self) -> int:
        """One more than the number of turns so far."""
        with open_read_model(self.paths, self.reader) as con:
            row = con.execute("SELECT coalesce(max(seq), 0) FROM turns").fetchone()
        return int(row[0] if row else 0) + 1

    def unfinished_turns(self) -> list[UnfinishedTurn]:
        """Turns with a message and no outcome."""
        with open_read_model(self.paths, self.reader) as con:
            rows = con.execute(
                "SELECT stream_id, pid, host FROM turns WHERE status = 'started' "
                "ORDER BY started_position"
            ).fetchall()
        return [UnfinishedTurn(r[0], int(r[1]), r[2]) for r in rows]

    def assemble(self, query: str, budget: int, exclude_turn: str | None) -> AssembledContext:
        """Select and render memory within `budget` tokens."""
        with open_read_model(self.paths, self.reader) as con:
            return fit(candidates(con, query, exclude_turn), budget)

    def ledger_head(self) -> int:
        """The last ledger position."""
        return self.reader.head()[0]
