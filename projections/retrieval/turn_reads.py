"""The read side as a turn's ports: `ReadModelRetrieval` reads a turn's context (one read
session, caught up once, so the context is the mind as it was just before the turn's message);
`ReadModelThreads` answers the thread lookups and the autonomy gate."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from itertools import islice
from typing import Any

from mindledger.domain.context_port import (
    AssembledContext,
    AutonomyState,
    ContextRequest,
    ThreadMatch,
)
from mindledger.domain.errors import MindError
from mindledger.projections.engine.ports import LedgerReader
from mindledger.projections.engine.projector import ProjectionError
from mindledger.projections.engine.readmodel import (
    ReadModelPaths,
    ReadSession,
    release_lingering,
    take_lingering,
    use_lingering,
)
from mindledger.projections.queries import thread_queries
from mindledger.projections.retrieval.recall import recall

# Up to this many events behind, a turn applies them itself in one batch; more are caught up in
# batches, as any reader would.
BACKGROUND_EVENTS = 1000
REFUSED = (
    "this mindledger cannot bring the read model past it (a newer mindledger may read it), so "
    "the turn was refused and nothing was written"
)


class ReadModelRetrieval:
    """A turn's context, from the DuckDB read models."""

    def __init__(self, paths: ReadModelPaths, reader: LedgerReader) -> None:
        self.paths = paths
        self.reader = reader

    def close(self) -> None:
        """Close the read session kept between turns, then the ledger reader."""
        release_lingering(self.paths.lock, self.reader)
        self.reader.close()

    def settle(self, summarise: bool = True) -> None:
        """Bring the session kept for the next turn up to the ledger head now (the events the
        turn just saved), so that turn starts from a current read model: a served mind calls
        this after answering a turn, in the time before the next request. Exactly once as
        ever (its projector's own position); a failure closes the session and the next turn
        meets it itself. `summarise` False: the summary is left to the session's close (it
        lists every open commitment, ~50 MB at 1M events, and no reader uses it while the
        session holds the lock)."""

        def catch_up(session: ReadSession) -> None:
            projector = session.projector
            if projector is None:
                return
            tail = list(islice(self.reader.rows(after=projector.position()), BACKGROUND_EVENTS + 1))
            if tail and len(tail) <= BACKGROUND_EVENTS:
                projector.apply_read(self.reader, tail)
                if summarise:  # the next `mind status`/`commitments` read it, not DuckDB
                    projector.summarise()

        use_lingering(self.paths.lock, self.reader, catch_up)

    def context(self, request: ContextRequest) -> PendingRead:
        """Open a read session as of now and catch it up to the ledger head before the turn
        saves its message, so the context is the mind just before the message; a read model
        that cannot be brought up to date refuses the turn here, before anything is written
        (a turn that saved its message first would add to a mind nobody can read). The
        retrieval itself (`result()`) runs once the message is saved. The session the previous
        turn kept open is taken up where it stopped (its projector's own position: exactly once)."""
        session = take_lingering(self.paths, self.reader) or ReadSession(self.paths, self.reader)
        try:
            session.open()
            position = session.position()
            tail = list(islice(self.reader.rows(after=position), BACKGROUND_EVENTS + 1))
            projector = session.projector
            if projector is not None and len(tail) <= BACKGROUND_EVENTS:
                head = tail[-1].position if tail else position
                projector.apply_read(self.reader, tail)
                return PendingRead(session, request, head, self.reader)
            session.refresh()  # a published copy to wait for, or a long way behind
            return PendingRead(session, request, session.position(), self.reader)
        except ProjectionError as e:
            PendingRead(session, request, 0).close()
            raise ProjectionError(f"{e.reason}; {REFUSED}", e.position) from None
        except BaseException:
            PendingRead(session, request, 0).close()
            raise


class PendingRead:
    """One turn's read session: caught up, read once, then kept open for `owner`'s next read
    (`ReadSession.linger`), or closed when it failed or has no owner."""

    def __init__(
        self, session: ReadSession, request: ContextRequest, head: int, owner: object = None
    ) -> None:
        self.session, self.request, self.head, self.owner = session, request, head, owner

    def cancel(self) -> None:
        """Close the session without reading."""
        self.owner = None
        self.close()

    def close(self) -> None:
        """Keep or close the session, and close the turn's embedder: it was made for this
        turn, and its cache file left open would be held until the collector ran (a forget
        replaces that file)."""
        if self.owner is None:
            self.session.close()
        else:
            self.session.linger(self.owner)
        close = getattr(self.request.embed, "close", None)
        if close is not None:
            close()

    def result(self) -> AssembledContext:
        """Retrieve, fuse and render memory within the budget. A failing embedding model costs
        the turn its vector channel, not its context."""
        try:
            con = self.session.con
            assert con is not None
            r = self.request
            args: dict[str, Any] = {
                "exclude_turn": r.exclude_turn,
                "for_turn": True,
                "lead_with_threads": r.lead_with_threads,
                "spans": r.spans,
            }
            projector = self.session.projector
            if projector is not None:  # the reads its projector keeps until it writes them
                args["kept"] = projector.kept
            try:
                context = recall(con, r.query, r.budget, r.now, embed=r.embed, **args)
            except MindError:
                if r.embed is None:
                    raise
                context = recall(con, r.query, r.budget, r.now, **args)
            context = replace(context, head=self.head)
        except BaseException:
            self.owner = None  # a session a read failed in is not kept
            raise
        finally:
            self.close()
        return context


class ReadModelThreads:
    """Thread facts from the read models; each call reads a read model caught up to the head."""

    def __init__(self, paths: ReadModelPaths, reader: LedgerReader) -> None:
        self.paths = paths
        self.reader = reader

    def find_threads(self, given: str) -> list[ThreadMatch]:
        """Threads by short id prefix or exact label."""
        with self._session() as con:
            return thread_queries.find_threads(con, given)

    def autonomy_state(self, now: datetime) -> AutonomyState:
        """Tension and cycle facts for the salience gate."""
        with self._session() as con:
            return thread_queries.autonomy_state(con, now)

    @contextmanager
    def _session(self) -> Iterator[Any]:
        """A read session caught up to the head: the one a turn kept open (same reader), kept
        again afterwards, or a new one."""
        session = take_lingering(self.paths, self.reader) or ReadSession(self.paths, self.reader)
        try:
            con = session.refresh()
            yield con
        except BaseException:
            session.close()
            raise
        session.linger(self.reader)
