"""Concept: one stream per token (e.g. `user.identity`) with versioned definitions and links."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from mindledger.domain.errors import InvalidInputError
from mindledger.domain.events import AggregateRoot, DomainEvent, stream_id
from mindledger.domain.text import clean_text, clean_token

BindingKind = Literal["event", "commitment", "thread"]


def concept_id(token: str) -> UUID:
    """The stream id of a concept token."""
    return stream_id("concept", token)


class Concept(AggregateRoot):
    """What a token means to the mind, what else it is called, and what it relates to."""

    class Defined(DomainEvent):
        TOPIC = "mind.concept.defined"
        SEALED = {"definition": "own"}
        SCHEMA = 2
        token: str
        definition: str

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> dict[str, Any]:
            # Schema 1 called the definition "text"; kept readable so old ledgers still replay.
            state = dict(state)
            state["definition"] = state.pop("text")
            return state

    class Aliased(DomainEvent):
        TOPIC = "mind.concept.aliased"
        SEALED = {"alias": "own"}
        alias: str

    class Related(DomainEvent):
        TOPIC = "mind.concept.related"
        SEALED = {"relation": "own"}  # a word the owner or the model chose
        target: str
        relation: str

    class Bound(DomainEvent):
        TOPIC = "mind.concept.bound"
        kind: BindingKind
        target: str

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.token = ""
        self.definition = ""
        self.definition_version = 0
        self.aliases: list[str] = []
        self.relations: list[tuple[str, str]] = []
        self.bindings: list[tuple[str, str]] = []

    @classmethod
    def define_new(cls, token: str, definition: str, at: datetime) -> Concept:
        """Create a concept with its first definition."""
        concept = cls(concept_id(token))
        concept.define(token, definition, at)
        return concept

    def define(self, token: str, definition: str, at: datetime) -> None:
        """Record a new version of the definition (a repeat of the current one is a no-op)."""
        definition = clean_text(definition, "definition", 8000)
        if definition != self.definition:
            self.trigger(self.Defined, at, token=token, definition=definition)

    def alias(self, alias: str, at: datetime) -> bool:
        """Add another name for the concept; returns False when it already had it."""
        alias = clean_text(alias, "alias", 100, single_line=True)
        if alias == self.token or alias in self.aliases:
            return False
        self.trigger(self.Aliased, at, alias=alias)
        return True

    def relate(self, target: str, relation: str, at: datetime) -> bool:
        """Add a typed edge to another concept; returns False when it exists already."""
        relation = clean_token(relation, "relation")
        if target == self.token:
            raise InvalidInputError(f"a concept cannot relate to itself ({target})")
        if (target, relation) in self.relations:
            return False
        self.trigger(self.Related, at, target=target, relation=relation)
        return True

    def bind(self, kind: BindingKind, target: str, at: datetime) -> None:
        """Bind the concept to an event position, a commitment CID or a thread id."""
        if (kind, target) not in self.bindings:
            self.trigger(self.Bound, at, kind=kind, target=target)

    def when_Defined(self, e: Defined) -> None:
        self.token, self.definition = e.token, e.definition
        self.definition_version += 1

    def when_Aliased(self, e: Aliased) -> None:
        self.aliases.append(e.alias)

    def when_Related(self, e: Related) -> None:
        self.relations.append((e.target, e.relation))

    def when_Bound(self, e: Bound) -> None:
        self.bindings.append((e.kind, e.target))
