"""The application service: every command that changes the mind goes through here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError

from domain.clock import Clock, system_clock
from domain.commitment import Commitment, Origin, episode_id, normalise
from domain.concept import BindingKind, Concept, concept_id
from domain.errors import (
    AlreadyInitialisedError,
    InvalidInputError,
    NotInitialisedError,
    UnknownCommitmentError,
    UnknownConceptError,
    UnknownThreadError,
)
from domain.events import AggregateRoot
from domain.identity import IDENTITY_ID, Identity
from domain.text import clean_token
from domain.thread import Thread, ThreadOrigin

T = TypeVar("T")
A = TypeVar("A", bound=AggregateRoot)

# Two processes racing on one stream: the loser reloads and decides again (FACTS.md).
_CONFLICT_RETRIES = 8


@dataclass(frozen=True)
class OpenOutcome:
    """What opening a commitment did: `opened` is False when that text was already open."""

    cid: str
    episode: int
    opened: bool


class Mind(Application[UUID]):
    """A mind: identity, commitments, concepts and threads, all kept as events."""

    name = "mind"

    def __init__(self, env: dict[str, str] | None = None, clock: Clock = system_clock) -> None:
        super().__init__(env)
        self.clock = clock

    # -- plumbing ---------------------------------------------------------------------------

    def _retry(self, command: Callable[[], T]) -> T:
        for attempt in range(_CONFLICT_RETRIES):
            try:
                return command()
            except IntegrityError:
                if attempt == _CONFLICT_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _get(self, kind: type[A], stream: UUID) -> A:
        aggregate: A = self.repository.get(stream, projector_func=kind.project)
        return aggregate

    def _save(self, *aggregates: AggregateRoot) -> None:
        events = [e for a in aggregates for e in a.collect()]
        if events:
            self.save(*events)

    # -- identity ---------------------------------------------------------------------------

    def is_initialised(self) -> bool:
        """Whether `init` has run on this ledger."""
        return bool(self.recorder.select_events(IDENTITY_ID, limit=1))

    def init(self, name: str, ledger_id: str) -> UUID:
        """Create the mind's identity; a ledger holds exactly one mind."""
        if self.is_initialised():
            raise AlreadyInitialisedError(
                f"this home already holds a mind called {self.identity().name!r}"
            )
        identity = Identity.create(ledger_id, name, self.clock())
        try:
            self._save(identity)
        except IntegrityError:
            raise AlreadyInitialisedError(
                "another process initialised this mind just now"
            ) from None
        return identity.id

    def identity(self) -> Identity:
        """The mind's identity; raises NotInitialisedError before `init`."""
        try:
            return self._get(Identity, IDENTITY_ID)
        except AggregateNotFoundError:
            raise NotInitialisedError("no mind here yet; run `mind init` first") from None

    def _change_identity(self, change: Callable[[Identity], None]) -> None:
        def command() -> None:
            identity = self.identity()
            change(identity)
            self._save(identity)

        self._retry(command)

    def adopt_name(self, name: str, reason: str | None = None) -> None:
        """The owner gives the mind a name."""
        self._change_identity(lambda i: i.adopt(name, reason, self.clock()))

    def propose_name(self, name: str, turn: int) -> None:
        """A turn proposes a name."""
        self._change_identity(lambda i: i.propose(name, turn, self.clock()))

    def ratify_name(self, name: str, turn: int) -> None:
        """A later turn ratifies a proposed name, adopting it."""
        self._change_identity(lambda i: i.ratify(name, turn, self.clock()))

    def describe(self, text: str) -> None:
        """Record a new self-description."""
        self._change_identity(lambda i: i.describe(text, self.clock()))

    def configure(self, key: str, value: str) -> bool:
        """Change one of this mind's settings (recorded); False when it had that value."""
        changed: list[bool] = []

        def change(identity: Identity) -> None:
            changed[:] = [identity.configure(key, value, self.clock())]

        self._change_identity(change)
        return changed[0]

    def set_model(self, model: str) -> None:
        """Switch the model that turns run on (recorded, so continuity is visible)."""
        self._change_identity(lambda i: i.switch_model(model, self.clock()))

    # -- commitments ------------------------------------------------------------------------

    def _latest_episode(self, cid: str) -> Commitment | None:
        latest: Commitment | None = None
        episode = 1
        while self.recorder.select_events(episode_id(cid, episode), limit=1):
            latest = self._get(Commitment, episode_id(cid, episode))
            episode += 1
        return latest

    def open_commitment(
        self,
        text: str,
        origin: Origin = "owner",
        thread_id: str | None = None,
        concepts: tuple[str, ...] = (),
    ) -> OpenOutcome:
        """Open a commitment; the same text while it is open is a no-op that says so."""
        self.identity()
        concepts = tuple(clean_token(c) for c in concepts)

        def command() -> OpenOutcome:
            probe = Commitment.open(text, origin, 1, self.clock(), thread_id, concepts)
            latest = self._latest_episode(probe.cid)
            if latest is not None and not latest.closed:
                if normalise(latest.text) != normalise(probe.text):
                    raise InvalidInputError(
                        f"CID {probe.cid} already names a different open commitment; reword it"
                    )
                return OpenOutcome(latest.cid, latest.episode, opened=False)
            episode = 1 if latest is None else latest.episode + 1
            commitment = Commitment.open(text, origin, episode, self.clock(), thread_id, concepts)
            self._save(commitment)
            return OpenOutcome(commitment.cid, episode, opened=True)

        return self._retry(command)

    def commitment(self, cid: str) -> Commitment:
        """The latest episode of a CID."""
        latest = self._latest_episode(cid.strip().lower())
        if latest is None:
            raise UnknownCommitmentError(
                f"no commitment has CID {cid!r}; `mind commitments --all` lists them"
            )
        return latest

    def close_commitment(
        self, cid: str, reason: str | None = None, evidence: tuple[int, ...] = ()
    ) -> Commitment:
        """Close the open episode of a CID; unknown or closed CIDs are rejected unchanged."""
        self.identity()

        def command() -> Commitment:
            commitment = self.commitment(cid)
            commitment.close(reason, evidence, self.clock())
            self._save(commitment)
            return commitment

        return self._retry(command)

    # -- concepts ---------------------------------------------------------------------------

    def concept(self, token: str) -> Concept:
        """The concept named by a token."""
        token = clean_token(token)
        try:
            return self._get(Concept, concept_id(token))
        except AggregateNotFoundError:
            raise UnknownConceptError(
                f"concept {token!r} is not defined; `mind concept define {token} TEXT` first"
            ) from None

    def define_concept(self, token: str, definition: str) -> int:
        """Define or redefine a concept; returns its definition version."""
        self.identity()
        token = clean_token(token)

        def command() -> int:
            try:
                concept = self.concept(token)
                concept.define(token, definition, self.clock())
            except UnknownConceptError:
                concept = Concept.define_new(token, definition, self.clock())
            self._save(concept)
            return concept.definition_version

        return self._retry(command)

    def _change_concept(self, token: str, change: Callable[[Concept], T]) -> T:
        self.identity()

        def command() -> T:
            concept = self.concept(token)
            result = change(concept)
            self._save(concept)
            return result

        return self._retry(command)

    def alias_concept(self, token: str, alias: str) -> bool:
        """Give a concept another name."""
        return self._change_concept(token, lambda c: c.alias(alias, self.clock()))

    def relate_concepts(self, source: str, target: str, relation: str) -> bool:
        """Relate two defined concepts with a typed edge."""
        target_token = self.concept(target).token
        return self._change_concept(
            source, lambda c: c.relate(target_token, relation, self.clock())
        )

    def bind_concept(self, token: str, kind: BindingKind, target: str) -> None:
        """Bind a concept to an event position, a commitment CID or a thread id."""
        self._change_concept(token, lambda c: c.bind(kind, target, self.clock()))

    # -- threads ----------------------------------------------------------------------------

    def open_thread(self, label: str, content: str, origin: ThreadOrigin = "owner") -> UUID:
        """Open a thread; returns its id."""
        self.identity()
        thread = Thread.open(label, content, origin, self.clock())
        self._save(thread)
        return thread.id

    def thread(self, thread_id: UUID) -> Thread:
        """A thread by its full id."""
        try:
            return self._get(Thread, thread_id)
        except AggregateNotFoundError:
            raise UnknownThreadError(
                f"no thread has id {thread_id}; `mind threads --all`"
            ) from None

    def resolve_thread(self, thread_id: UUID, verdict: str, **details: Any) -> Thread:
        """Resolve a thread with a verdict and what the verdict requires."""
        self.identity()

        def command() -> Thread:
            thread = self.thread(thread_id)
            thread.resolve(verdict, self.clock(), **details)
            self._save(thread)
            return thread

        return self._retry(command)
