"""The application service: every command that changes the mind goes through here."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import IntegrityError, Recording

from mindledger.domain import commands
from mindledger.domain.changes import CONFLICT_RETRIES, Changes
from mindledger.domain.clock import Clock, system_clock
from mindledger.domain.commands import OpenOutcome
from mindledger.domain.commitment import Commitment, Origin
from mindledger.domain.errors import (
    AlreadyInitialisedError,
    ConflictError,
    NotInitialisedError,
)
from mindledger.domain.events import AggregateRoot, DomainEvent
from mindledger.domain.identity import IDENTITY_ID, Identity
from mindledger.domain.import_kept import MESSAGES, note_import_kept
from mindledger.domain.knowledge_uses import KnowledgeUseCases
from mindledger.domain.text import clean_token
from mindledger.domain.text_keys import Secrets, TextKeys

if TYPE_CHECKING:  # loaded on use (their event classes are built only then)
    from mindledger.domain.concept import BindingKind, Concept
    from mindledger.domain.conversation import Observed
    from mindledger.domain.foreign_apply import ImportTally
    from mindledger.domain.foreign_import import ForeignFile, ForeignRecord
    from mindledger.domain.thread import Thread, ThreadOrigin

T = TypeVar("T")
A = TypeVar("A", bound=AggregateRoot)

__all__ = ["Mind", "OpenOutcome"]

IMPORT_BATCH = 500
# Records of a foreign ledger per transaction: each makes one or two events (batches of
# ~100 events or more append at ~40k events/s; fewer transactions hold the lock less often:
# docs/dependency-facts.md, Write rates).
FOREIGN_BATCH = 250


class Mind(KnowledgeUseCases, Application[UUID]):
    """A mind: identity, commitments, concepts, threads and knowledge, all kept as events."""

    name = "mind"

    def __init__(
        self,
        env: dict[str, str] | None = None,
        clock: Clock = system_clock,
        secrets: Secrets | None = None,
    ) -> None:
        """`secrets`: where the keyed hashes' secrets come from; by default the key store
        that seals this mind's events (the persistence's mapper holds it as `keys`)."""
        super().__init__(env)
        self.clock = clock
        found = secrets if secrets is not None else getattr(self.mapper, "keys", None)
        self.text_keys = TextKeys(found)
        self._initialised = False

    # -- plumbing: the unit of work every use case (here and beside it) goes through ------

    def decide(self, command: Callable[[Changes], T]) -> T:
        """Run `command` against fresh state and save what it changed in one transaction; when a
        concurrent writer won the race, run it again on the new state (the one retry policy)."""
        return self.decide_recorded(command)[0]

    def decide_recorded(self, command: Callable[[Changes], T]) -> tuple[T, list[Recording[UUID]]]:
        """`decide`, also returning the recordings (their notification ids)."""
        for attempt in range(CONFLICT_RETRIES):
            changes = Changes(self)
            result = command(changes)
            events = changes.events()
            try:
                return result, (self.save(*events) if events else [])
            except IntegrityError:
                if attempt == CONFLICT_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def load(self, kind: type[A], stream: UUID) -> A:
        """An aggregate as it stands (AggregateNotFoundError when the stream is empty)."""
        aggregate: A = self.repository.get(stream, projector_func=kind.project)
        return aggregate

    def history_events(self, stream: UUID) -> list[DomainEvent]:
        """Every event of a stream, in order, as recorded."""
        events = [self.mapper.to_domain_event(s) for s in self.recorder.select_events(stream)]
        return [e for e in events if isinstance(e, DomainEvent)]

    def record(self, *aggregates: AggregateRoot) -> list[Recording[UUID]]:
        """Save the pending events of new aggregates no other writer can touch (a turn's
        message is saved with `decide`: its number can race)."""
        events = [e for a in aggregates for e in a.collect()]
        return self.save(*events) if events else []

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
            self.record(identity)
        except IntegrityError:
            raise AlreadyInitialisedError(
                "another process initialised this mind just now"
            ) from None
        self.text_keys.make_all()
        return identity.id

    def record_forgotten(self, plan: dict[str, Any], role: str, via: str) -> bool:
        """Record a forget whose keys are destroyed (once: a forget finished after a crash is
        not recorded twice); False when it was recorded already."""
        from mindledger.domain.forgetting import Forgetting, check_forget_role  # on use

        check_forget_role(role)

        def record(changes: Changes) -> bool:
            forgetting = changes.find(Forgetting, Forgetting.stream(plan["forget_id"]))
            if forgetting is None:
                forgetting = Forgetting(Forgetting.stream(plan["forget_id"]))
                changes.add(forgetting)
            elif forgetting.recorded:
                return False
            forgetting.record(plan, role, via, self.clock())
            return True

        return self.decide(record)

    def identity(self) -> Identity:
        """The mind's identity; raises NotInitialisedError before `init`."""
        return commands.identity(Changes(self))

    def require_initialised(self) -> None:
        """Raise NotInitialisedError before `init`: one point query for the identity's first
        event, not a rebuild of the identity, and none once it was found (a ledger is
        append-only, so an initialised one stays so)."""
        if not self._initialised:
            if not self.is_initialised():
                raise NotInitialisedError("no mind here yet; run `mind init` first")
            self._initialised = True

    def _change_identity(self, change: Callable[[Identity], None]) -> None:
        self.decide(lambda changes: change(commands.identity(changes)))

    def adopt_name(self, name: str, reason: str | None = None) -> None:
        """The owner gives the mind a name."""
        self._change_identity(lambda i: i.adopt(name, reason, self.clock()))

    def propose_name(self, name: str, turn: int) -> None:
        """A turn proposes a name."""
        self.decide(lambda changes: commands.propose_name(changes, name, turn, self.clock()))

    def ratify_name(self, name: str, turn: int) -> None:
        """A later turn ratifies a proposed name, adopting it."""
        self.decide(lambda changes: commands.ratify_name(changes, name, turn, self.clock()))

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

    def open_commitment(
        self,
        text: str,
        origin: Origin = "owner",
        thread_id: str | None = None,
        concepts: tuple[str, ...] = (),
    ) -> OpenOutcome:
        """Open a commitment; the same text while it is open is a no-op that says so."""
        self.require_initialised()
        concepts = tuple(clean_token(c) for c in concepts)
        return self.decide(
            lambda changes: commands.open_commitment(
                changes, text, origin, self.clock(), thread_id, concepts
            )
        )

    def commitment(self, cid: str) -> Commitment:
        """The latest episode of a CID."""
        return commands.commitment(Changes(self), cid)

    def close_commitment(
        self, cid: str, reason: str | None = None, evidence: tuple[int, ...] = ()
    ) -> Commitment:
        """Close the open episode of a CID; unknown or closed CIDs are rejected unchanged."""
        self.require_initialised()
        return self.decide(
            lambda changes: commands.close_commitment(changes, cid, reason, evidence, self.clock())
        )

    # -- concepts ---------------------------------------------------------------------------

    def concept(self, token: str) -> Concept:
        """The concept named by a token."""
        return commands.concept(Changes(self), token)

    def define_concept(self, token: str, definition: str) -> int:
        """Define or redefine a concept; returns its definition version."""
        self.require_initialised()
        return self.decide(
            lambda changes: commands.define_concept(changes, token, definition, self.clock())
        )

    def _change_concept(self, token: str, change: Callable[[Concept], T]) -> T:
        self.require_initialised()
        return self.decide(lambda changes: change(commands.concept(changes, token)))

    def alias_concept(self, token: str, alias: str) -> bool:
        """Give a concept another name."""
        return self._change_concept(token, lambda c: c.alias(alias, self.clock()))

    def relate_concepts(self, source: str, target: str, relation: str) -> bool:
        """Relate two defined concepts with a typed edge."""
        self.require_initialised()
        return self.decide(
            lambda changes: commands.relate_concepts(
                changes, source, target, relation, self.clock()
            )
        )

    def bind_concept(self, token: str, kind: BindingKind, target: str) -> None:
        """Bind a concept to an event position, a commitment CID or a thread id."""
        self._change_concept(token, lambda c: c.bind(kind, target, self.clock()))

    # -- threads ----------------------------------------------------------------------------

    def open_thread(self, label: str, content: str, origin: ThreadOrigin = "owner") -> UUID:
        """Open a thread; returns its id."""
        from mindledger.domain.thread import Thread

        self.require_initialised()
        thread = Thread.open(label, content, origin, self.clock())
        self.record(thread)
        return thread.id

    def thread(self, thread_id: UUID) -> Thread:
        """A thread by its full id."""
        return commands.thread(Changes(self), thread_id)

    def resolve_thread(self, thread_id: UUID, verdict: str, **details: Any) -> Thread:
        """Resolve a thread with a verdict and what the verdict requires."""
        self.require_initialised()
        return self.decide(
            lambda changes: commands.resolve_thread(
                changes, thread_id, verdict, self.clock(), **details
            )
        )

    # -- imports ----------------------------------------------------------------------------

    def import_conversation(
        self,
        source: str,
        participants: list[str],
        messages: Iterable[Observed],
        progress: Callable[[int], None] | None = None,
        batch: int = IMPORT_BATCH,
        title: str | None = None,
        recorded: Callable[[set[str]], None] | None = None,
        *,
        same_transcript: bool = False,
    ) -> tuple[int, int]:
        """Append the messages not yet recorded for `source` (saved `batch` at a time, so a
        long import holds the write lock briefly each time); returns (added, skipped).
        `title`: the conversation's title, recorded when it is new or changed; `recorded` is
        told the source ids recorded before this import (a re-import can say which of them
        its file no longer holds). Another import of the same conversation writing at the same
        time makes this one read what it wrote and go on; ConflictError when it keeps winning.
        `same_transcript`: the messages are a transcript whose conversation `source` is (one
        `transcript_source` chose, or one named for it): the transcript's messages the
        conversation already holds are skipped (`Conversation.held_of`), and
        ConversationTakenError when it holds another transcript by the time it is written."""
        given = list(messages)
        saved = [0]  # messages this import saved, over every attempt
        try:
            for _ in range(CONFLICT_RETRIES):
                try:
                    self._import_conversation(
                        source,
                        participants,
                        given,
                        progress,
                        batch,
                        title,
                        recorded,
                        saved,
                        same_transcript,
                    )
                    return saved[0], len(given) - saved[0]
                except IntegrityError:
                    continue  # the other import saved these versions first: read them, go on
        except BaseException as e:  # the batches saved stay: the error says how many
            note_import_kept(e, saved[0], MESSAGES)
            raise
        raise ConflictError(
            f"another import of conversation {source} is writing it; run this import again "
            "when it has finished (it adds only what is still missing)"
        )

    def _import_conversation(
        self,
        source: str,
        participants: list[str],
        messages: list[Observed],
        progress: Callable[[int], None] | None,
        batch: int,
        title: str | None,
        recorded: Callable[[set[str]], None] | None,
        saved: list[int],
        same_transcript: bool,
    ) -> None:
        from mindledger.domain.conversation import Conversation, conversation_id

        self.require_initialised()
        changes = Changes(self)
        conversation = changes.find(Conversation, conversation_id(source))
        known = 0  # the transcript's first messages, which the conversation holds
        if same_transcript and conversation is not None:
            known = conversation.held_of(messages)
        if conversation is None:
            conversation = Conversation.start(source, participants, self.clock())
        elif recorded is not None:
            recorded(set(conversation.source_ids))
        if title is not None:
            conversation.entitle(title, self.clock())
        added = 0  # since the last save
        for m in messages[known:]:
            if conversation.observe(
                m.speaker, m.text, m.said_at, m.source_id, self.clock(), m.session, m.caption
            ):
                added += 1
            if len(conversation.pending) >= batch:
                self.record(conversation)
                saved[0], added = saved[0] + added, 0
                if progress:
                    progress(batch)
        self.record(conversation)
        saved[0] += added

    def transcript_source(
        self, messages: Sequence[Observed], sources: Iterable[str], kin: str = "chat/"
    ) -> str:
        """Where an import of the transcript `messages` belongs: the conversation it is, by its
        content (`domain.transcripts`), else the first free of `sources`."""
        from mindledger.domain import transcripts

        return transcripts.transcript_source(Changes(self), messages, sources, kin)

    def import_foreign(
        self,
        file: ForeignFile,
        records: Sequence[ForeignRecord],
        progress: Callable[[int], None] | None = None,
        batch: int = FOREIGN_BATCH,
    ) -> ImportTally:
        """Bring in the records of a foreign ledger not yet imported from this file: each kept
        with its provenance, and what has a meaning here made into it (`domain.foreign_apply`)."""
        from mindledger.domain.foreign_apply import import_records

        self.require_initialised()
        return import_records(self.decide, file, records, self.clock(), batch, progress)
