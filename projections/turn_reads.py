"""The read side as a turn's ContextSource: one read session per turn, caught up once, so that
all of a turn's reads see the mind as it was just before the turn's message."""

from __future__ import annotations

from concurrent.futures import Future
from datetime import datetime
from itertools import islice
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
from projections.concurrent_reads import in_background
from projections.ports import LedgerReader
from projections.readmodel import ReadModelPaths, ReadSession
from projections.retrieval import recall

TURN_STARTED = "mind.turn.started"
# Up to this many events behind, a turn applies them while it saves its message; more are
# caught up first, in batches, as any reader would.
BACKGROUND_EVENTS = 1000


class ReadModelContextSource:
    """Context for turns, from the DuckDB read models."""

    def __init__(self, paths: ReadModelPaths, reader: LedgerReader) -> None:
        self.paths = paths
        self.reader = reader
        self.session: ReadSession | None = None
        self.caught_up: Future[Any] | None = None  # the session's one catch-up

    def __enter__(self) -> ReadModelContextSource:
        # Opened and caught up by the first read (`next_seq` starts the catch-up and leaves it
        # running); later reads of the session see the same events.
        self.session = ReadSession(self.paths, self.reader)
        self.caught_up = None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.session is None:
            return
        try:
            if self.caught_up is not None:
                failure = self.caught_up.exception()  # the file is closed once it is idle
                if failure is not None and exc[0] is None:
                    raise failure
        finally:
            self.caught_up = None
            self.session.close()
            self.session = None

    def close(self) -> None:
        """Close the ledger reader."""
        self.reader.close()

    def _con(self) -> duckdb.DuckDBPyConnection:
        if self.session is None:
            raise RuntimeError("use the context source inside `with source:`")
        if self.caught_up is None:
            done: Future[Any] = Future()
            done.set_result(self.session.refresh())  # set only once it succeeded
            self.caught_up = done
        self.caught_up.result()
        assert self.session.con is not None
        return self.session.con

    def next_seq(self) -> int:
        """One more than the number of turns so far: those in the read model, and those
        started in the ledger after its position. Starts catching the read model up to the
        ledger head and leaves it running (DuckDB releases the GIL): the turn saves its message
        meanwhile, and every later read of this session waits for it and sees the mind as it
        was just before that message, which is thereby never retrieved as its own memory."""
        if self.session is None:
            raise RuntimeError("use the context source inside `with source:`")
        self.session.open()
        position, turns = self.session.progress()
        tail = list(islice(self.reader.rows(after=position), BACKGROUND_EVENTS + 1))
        projector = self.session.projector
        if projector is not None and len(tail) <= BACKGROUND_EVENTS:
            self.caught_up = in_background(projector.apply, tail)
            return turns + sum(r.topic == TURN_STARTED for r in tail) + 1
        self._con()  # a published copy to wait for, or a long way behind
        return self.session.progress()[1] + 1

    def unfinished_turns(self) -> list[UnfinishedTurn]:
        """Turns with a message and no outcome (before this turn's, after `next_seq`)."""
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
