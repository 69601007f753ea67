"""The knowledge use cases of the application (`Mind` inherits them): capture, the owner's
decisions, reading an item and its history. Each runs one command of domain/knowledge_commands.py
through `Mind.decide`, with the role that asks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar
from uuid import UUID

from mindledger.domain import knowledge_commands as kc
from mindledger.domain.changes import Changes
from mindledger.domain.clock import Clock
from mindledger.domain.events import DomainEvent
from mindledger.domain.knowledge import (
    Freshness,
    Judgement,
    Knowledge,
    Provenance,
    ReusePolicy,
    Role,
    ValidationState,
    content_hash,
    intent_hash,
    knowledge_stream,
)
from mindledger.domain.knowledge_commands import KnowledgeChange
from mindledger.domain.text_keys import TextKeys

T = TypeVar("T")


class KnowledgeUseCases:
    """Knowledge as use cases of the mind."""

    if TYPE_CHECKING:
        clock: Clock
        text_keys: TextKeys

        def decide(self, command: Callable[[Changes], T]) -> T: ...
        def require_initialised(self) -> None: ...
        def history_events(self, stream: UUID) -> list[DomainEvent]: ...

    def remember(
        self,
        text: str,
        question: str | None = None,
        concepts: Sequence[str] = (),
        state: ValidationState | None = None,
        confidence: int | None = None,
        freshness: Freshness | None = None,
        reuse: ReusePolicy | None = None,
        role: Role = "owner",
        reference: str = "mind remember",
    ) -> KnowledgeChange:
        """Capture `text` as the answer to `question` (the text itself when none is given);
        the same intent again adds a revision to the same item."""
        self.require_initialised()
        at = self.clock()
        source = Provenance(
            source="owner" if role == "owner" else "model",
            reference=reference,
            time=at,
            content_hash=content_hash(self.text_keys, answer=text.strip()),
        )
        return self.decide(
            lambda changes: kc.capture(
                changes,
                question if question is not None else text,
                text,
                at,
                role,
                [source],
                state,
                confidence,
                freshness,
                reuse,
                concepts,
            )
        )

    def store_model_answer(
        self, question: str, answer: str, model: str, turn_id: str, sources: Sequence[int] = ()
    ) -> KnowledgeChange | None:
        """Keep a generated answer as an unverified model item, unless an item for that intent
        exists already (a generated answer never overwrites one): None then."""
        at = self.clock()

        def command(changes: Changes) -> KnowledgeChange | None:
            if kc.find_question(changes, question) is not None:
                return None
            provenance = kc.model_provenance(changes, model, turn_id, answer, at, sources)
            return kc.capture(changes, question, answer, at, "ai", provenance, turn_id=turn_id)

        return self.decide(command)

    def knowledge_item(self, hash_: str) -> Knowledge | None:
        """The item of an intent hash as it stands (deleted ones included), or None (never
        captured, or forgotten)."""
        return kc.find(Changes(self), hash_)  # type: ignore[arg-type]

    def knowledge_for(self, question: str) -> Knowledge | None:
        """The item whose intent is the question's (deleted ones included), or None (never
        captured, or forgotten)."""
        return kc.find_question(Changes(self), question)  # type: ignore[arg-type]

    def intent_hash_of(self, question: str) -> str:
        """The hash a question's intent has in this mind (keyed: domain/text_keys.py)."""
        return intent_hash(question, self.text_keys)

    def judge_knowledge(
        self,
        hash_: str,
        judgement: Judgement,
        role: Role = "owner",
        confidence: int | None = None,
        note: str | None = None,
    ) -> KnowledgeChange:
        """Verify, dispute or retract an item (the owner only)."""
        kc.check_role(role, judgement)
        self.require_initialised()
        return self.decide(
            lambda changes: kc.judge(
                changes, hash_, judgement, role, self.clock(), confidence, note
            )
        )

    def edit_knowledge(self, hash_: str, answer: str, role: Role = "owner") -> KnowledgeChange:
        """A new revision of an item's answer (the owner only)."""
        kc.check_role(role, "edit")
        self.require_initialised()
        return self.decide(lambda changes: kc.edit(changes, hash_, answer, role, self.clock()))

    def delete_knowledge(
        self, hash_: str, role: Role = "owner", reason: str | None = None
    ) -> KnowledgeChange:
        """Tombstone an item (the owner only); its history stays in the ledger."""
        kc.check_role(role, "delete")
        self.require_initialised()
        return self.decide(lambda changes: kc.delete(changes, hash_, role, self.clock(), reason))

    def decide_turn(
        self, turn_id: UUID, judgement: Judgement, role: Role = "owner"
    ) -> KnowledgeChange:
        """Approve or discard a turn's answer (the owner only)."""
        kc.check_role(role, judgement)
        self.require_initialised()
        return self.decide(
            lambda changes: kc.decide_turn(changes, turn_id, judgement, role, self.clock())
        )

    def knowledge_history(self, hash_: str, role: Role = "owner") -> list[DomainEvent]:
        """Every event of an item, older revisions of a deleted one included (the owner only);
        none for a forgotten item, as for one never captured, and for an item captured again
        after its words were forgotten, only its events since."""
        kc.check_role(role, "history")
        stream = knowledge_stream(hash_)
        events, item, start = self.history_events(stream), Knowledge(stream), 0
        for n, event in enumerate(events):
            if isinstance(event, Knowledge.Captured) and item.forgotten:
                start = n
            item.apply(event)
        return events[start:] if item.known else []
