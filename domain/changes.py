"""One decision's unit of work: the aggregates it reads and changes, saved together.

A command (domain/commands.py) decides against a `Changes`; `Mind.decide` saves what it
changed in one transaction and runs it again on fresh state when a concurrent writer won the
race. A turn runs all of its control lines against one `Changes`, so a reply and everything it
did are saved together, through the same commands the CLI uses.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application

from mindledger.domain.commitment import Commitment, episode_id
from mindledger.domain.events import AggregateRoot, DomainEvent
from mindledger.domain.text_keys import TextKeys

A = TypeVar("A", bound=AggregateRoot)

# Two processes racing on one stream: the loser reloads and decides again (the second save of a
# stream version fails with IntegrityError: docs/dependency-facts.md). The one
# retry policy of every command, turns included.
CONFLICT_RETRIES = 8
SCAN_PAGE = 1000


class Changes:
    """The aggregates one decision loaded (once each) and the ones it created."""

    def __init__(self, app: Application[UUID]) -> None:
        self.app = app
        self.changed: dict[UUID, AggregateRoot] = {}
        # The aggregate whose first event opens the saved batch and whose later events close it
        # (a turn: its reply first, its record last, what the reply changed in between).
        self.around: AggregateRoot | None = None

    @property
    def keys(self) -> TextKeys:
        """The mind's keyed hashes of text (`Mind.text_keys`): what names a promise, an
        intent or an import."""
        keys = getattr(self.app, "text_keys", None)
        if not isinstance(keys, TextKeys):
            raise TypeError(f"{type(self.app).__name__} has no text_keys (a Mind has)")
        return keys

    def exists(self, stream: UUID) -> bool:
        """Whether the stream has an event (or was created in this decision)."""
        return stream in self.changed or bool(self.app.recorder.select_events(stream, limit=1))

    def load(self, kind: type[A], stream: UUID) -> A:
        """The aggregate, loaded once per decision; AggregateNotFoundError when absent."""
        if stream not in self.changed:
            aggregate: A = self.app.repository.get(stream, projector_func=kind.project)
            self.changed[stream] = aggregate
        found = self.changed[stream]
        assert isinstance(found, kind)
        return found

    def find(self, kind: type[A], stream: UUID) -> A | None:
        """The aggregate, or None when the stream has no event."""
        try:
            return self.load(kind, stream)
        except AggregateNotFoundError:
            return None

    def add(self, aggregate: AggregateRoot) -> None:
        """A new aggregate, saved with the rest."""
        self.changed[aggregate.id] = aggregate

    def latest_episode(self, cid: str) -> Commitment | None:
        """The latest episode of a commitment CID, or None when it was never opened."""
        latest, n = None, 1
        while self.exists(episode_id(cid, n)):
            latest, n = self.load(Commitment, episode_id(cid, n)), n + 1
        return latest

    def last_event(self, stream: UUID, topics: Collection[str] | None = None) -> DomainEvent | None:
        """A stream's last event, read with one query (the stream is not replayed); with
        `topics`, None when it is of another topic, which is then not decoded (a turn's last
        event, its outcome, holds its whole context, sealed)."""
        stored = self.app.recorder.select_events(stream, desc=True, limit=1)
        if not stored or (topics is not None and stored[0].topic not in topics):
            return None
        event = self.app.mapper.to_domain_event(stored[0])
        assert isinstance(event, DomainEvent)
        return event

    def last_events(self, stream: UUID, limit: int, below: int | None = None) -> list[DomainEvent]:
        """A stream's last `limit` events (before version `below`, if given), newest first,
        read with one query."""
        found = []
        older = {"lte": below - 1} if below is not None else {}
        for stored in self.app.recorder.select_events(stream, desc=True, limit=limit, **older):
            event = self.app.mapper.to_domain_event(stored)
            assert isinstance(event, DomainEvent)
            found.append(event)
        return found

    def first_events(self, stream: UUID, limit: int) -> list[DomainEvent]:
        """A stream's first `limit` events, read with one query (the stream is not replayed)."""
        found = []
        for stored in self.app.recorder.select_events(stream, limit=limit):
            event = self.app.mapper.to_domain_event(stored)
            assert isinstance(event, DomainEvent)
            found.append(event)
        return found

    def scan(self, topics: Sequence[str]) -> Iterator[DomainEvent]:
        """Every event of these topics, in ledger order (a read of the whole ledger: for a
        one-time upgrade, never on a command's usual path)."""
        start = 1
        while True:
            page = self.app.recorder.select_notifications(start, SCAN_PAGE, topics=topics)
            for notification in page:
                event = self.app.mapper.to_domain_event(notification)
                assert isinstance(event, DomainEvent)
                yield event
            if len(page) < SCAN_PAGE:
                return
            start = page[-1].id + 1

    def events(self) -> list[DomainEvent]:
        """The pending events of every aggregate, in the order the aggregates joined."""
        others = [e for a in self.changed.values() if a is not self.around for e in a.collect()]
        if self.around is None:
            return others
        own = self.around.collect()
        return own[:1] + others + own[1:]

    def streams(self) -> list[str]:
        """The streams this decision loaded or created."""
        return [s.hex for s in self.changed]
