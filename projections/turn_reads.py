"""The read side as a turn's ContextSource: one read session per turn, refreshed before each
read so it includes every event written before that read."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from domain.context_port import (
    AssembledContext,
    AutonomyState,
    Embed,
    ThreadMatch,
    UnfinishedTurn,
)
from domain.errors import MindError
from projections import thread_queries
from projections.ports import LedgerReader
from projections.readmodel import ReadModelPaths, ReadSession
from projections.retrieval import recall

TURN_STARTED = "mind.turn.started"


class ReadModelContextSource:
    """Context for turns, from the DuckDB read models."""

    def __init__(self, paths: ReadModelPaths, reader: LedgerReader) -> None:
        self.paths = paths
        self.reader = reader
        self.session: ReadSession | None = None

    def __enter__(self) -> ReadModelContextSource:
        # Opened on the first read; each read catches up first, except `next_seq`.
        self.session = ReadSession(self.paths, self.reader)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    def close(self) -> None:
        """Close the ledger reader."""
        self.reader.close()

    def _con(self) -> duckdb.DuckDBPyConnection:
        if self.session is None:
            raise RuntimeError("use the context source inside `with source:`")
        return self.session.refresh()

    def next_seq(self) -> int:
        """One more than the number of turns so far: those in the read model as it stands, and
        those started in the ledger after it. Counting the tail instead of applying it saves a
        turn one of its two catch-ups: the one after its own message applies both."""
        if self.session is None:
            raise RuntimeError("use the context source inside `with source:`")
        self.session.open()
        position, turns = self.session.progress()
        tail = self.reader.rows(after=position)
        return turns + sum(r.topic == TURN_STARTED for r in tail) + 1

    def unfinished_turns(self) -> list[UnfinishedTurn]:
        """Turns with a message and no outcome."""
        rows = (
            self._con()
            .execute(
                "SELECT stream_id, pid, host FROM turns "
                "WHERE status = 'started' ORDER BY started_position"
            )
            .fetchall()
        )
        return [UnfinishedTurn(r[0], int(r[1]), r[2]) for r in rows]

    def assemble(
        self,
        query: str,
        budget: int,
        exclude_turn: str | None,
        now: datetime,
        lead_with_threads: bool = False,
        embed: Embed | None = None,
    ) -> AssembledContext:
        """Retrieve, fuse and render memory within `budget` tokens. A failing embedding model
        costs the turn its vector channel, not its context."""
        args: dict[str, Any] = {
            "exclude_turn": exclude_turn,
            "for_turn": True,
            "lead_with_threads": lead_with_threads,
        }
        try:
            return recall(self._con(), query, budget, now, embed=embed, **args)
        except MindError:
            if embed is None:
                raise
            return recall(self._con(), query, budget, now, **args)

    def find_threads(self, given: str) -> list[ThreadMatch]:
        """Threads by short id prefix or exact label."""
        return thread_queries.find_threads(self._con(), given)

    def autonomy_state(self, now: datetime) -> AutonomyState:
        """Tension and cycle facts for the salience gate."""
        return thread_queries.autonomy_state(self._con(), now)

    def ledger_head(self) -> int:
        """The last ledger position."""
        return self.reader.head()[0]
