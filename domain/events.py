"""The base of every domain event and aggregate, and the registry of stable topics."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any, ClassVar, Literal, Self, get_args, get_origin
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from mindledger.domain.text import FORGOTTEN as FORGOTTEN
from mindledger.domain.text import FORGOTTEN_MARK as FORGOTTEN_MARK

# Every deterministic stream id is derived from this namespace, so ids are stable across machines.
MIND_NAMESPACE = UUID("6f1d7c2e-3b5a-4c8e-9a0f-2d4b6e8a1c3f")


_NAMESPACE_BYTES = MIND_NAMESPACE.bytes
# uuid5's version (5) and RFC 4122 variant bits, set in a SHA-1 digest's first 16 bytes.
_CLEARED = ~((0xF000 << 64) | (0xC000 << 48))
_SET = (0x5000 << 64) | (0x8000 << 48)


def stream_id(*parts: str) -> UUID:
    """Return the deterministic stream id for a name like ('concept', 'user.identity'):
    `uuid5(MIND_NAMESPACE, "/".join(parts))`, spelled out (a third of uuid5's time, whose
    Python-level checks were ~3% of checking an export, which derives one id an event)."""
    digest = hashlib.sha1(
        _NAMESPACE_BYTES + "/".join(parts).encode(), usedforsecurity=False
    ).digest()
    return UUID(int=int.from_bytes(digest[:16], "big") & _CLEARED | _SET)


EVENT_TYPES: dict[str, type[DomainEvent]] = {}
# The module declaring each kind of event (a topic's middle word: `mind.commitment.opened` is a
# `commitment` event). A reader finds a stored event's class through `event_class`, which
# imports that module the first time the kind is met: a command builds only the event classes
# of the streams it reads (building all of them cost a one-shot turn ~15 ms of CPU), and
# still knows every type it meets, whichever commands ran before in the process.
EVENT_MODULES: dict[str, str] = {
    kind: f"mindledger.domain.{module}"
    for kind, module in {
        "ask": "ask",
        "commitment": "commitment",
        "concept": "concept",
        "conversation": "conversation",
        "forget": "forgetting",
        "identity": "identity",
        "import": "foreign_import",
        "knowledge": "knowledge",
        "thread": "thread",
        "tick": "autonomy",
        "turn": "turn",
        "turn_numbers": "turn_numbers",
    }.items()
}


def event_class(topic: str) -> type[DomainEvent] | None:
    """The class of events stored under `topic` (None for a topic this version does not know),
    its module imported on first need (see EVENT_MODULES)."""
    cls = EVENT_TYPES.get(topic)
    if cls is None:
        parts = topic.split(".")
        module = EVENT_MODULES.get(parts[1] if len(parts) > 2 else topic)
        if module is not None:
            importlib.import_module(module)
            cls = EVENT_TYPES.get(topic)
    return cls


Scope = Literal["own", "context"]
# FORGOTTEN, FORGOTTEN_MARK: see `domain.text` (there so that readers need no event classes).


class DomainEvent(BaseModel):
    """A fact: frozen, validated, with an explicit topic that survives class renames."""

    # Validators build on first use: a command pays only for the event types it meets (about
    # half the import of the domain otherwise goes to building every schema up front).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    TOPIC: ClassVar[str] = ""
    # The fields holding text a person or the model wrote (or a hash of it), which forgetting
    # must be able to destroy: field -> key scope. "own": the event's own words, under the
    # event's data key; "context": copies of other events' words (a turn's prompt and context),
    # under a second key, destroyed when any event they quote is forgotten. The adapters store
    # these fields encrypted (adapters/sealing.py); everything else stays in the clear.
    SEALED: ClassVar[dict[str, Scope]] = {}
    # Bump SCHEMA and add `upcast_vN_vN1(state)` static methods when the payload changes shape.
    SCHEMA: ClassVar[int] = 1

    originator_id: UUID
    originator_version: int
    timestamp: datetime

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        topic = cls.__dict__.get("TOPIC")
        if topic:
            if topic in EVENT_TYPES:
                raise TypeError(f"event topic {topic!r} is registered twice")
            EVENT_TYPES[topic] = cls

    @classmethod
    def forgotten_value(cls, name: str) -> Any:
        """What field `name` holds once its key is destroyed: [] for a list, {} for an object,
        FORGOTTEN for text (validates against the field's type)."""
        annotation = cls.model_fields[name].annotation
        kinds = {get_origin(a) or a for a in (get_args(annotation) or (annotation,))}
        kinds.add(get_origin(annotation) or annotation)
        if list in kinds:
            return []
        if dict in kinds:
            return {}
        return FORGOTTEN

    @classmethod
    def upcast(cls, state: dict[str, Any], from_schema: int) -> dict[str, Any]:
        """Bring a stored payload written at `from_schema` up to this class's SCHEMA."""
        while from_schema < cls.SCHEMA:
            step = getattr(cls, f"upcast_v{from_schema}_v{from_schema + 1}")
            state = step(state)
            from_schema += 1
        return state


class AggregateRoot:
    """State folded from one stream's events; commands append new events to `pending`."""

    def __init__(self, id: UUID) -> None:
        self.id = id
        self.version = 0
        self.created_at: datetime | None = None
        self.modified_at: datetime | None = None
        self.pending: list[DomainEvent] = []

    def apply(self, event: DomainEvent) -> None:
        """Fold one event into the state (dispatches to `when_<EventClass>`)."""
        handler = getattr(self, "when_" + type(event).__name__)
        handler(event)
        self.version = event.originator_version
        if self.created_at is None:
            self.created_at = event.timestamp
        self.modified_at = event.timestamp

    def trigger(self, event_class: type[DomainEvent], at: datetime, **fields: Any) -> None:
        """Record a new event at the next version and apply it."""
        event = event_class(
            originator_id=self.id, originator_version=self.version + 1, timestamp=at, **fields
        )
        self.apply(event)
        self.pending.append(event)

    def collect(self) -> list[DomainEvent]:
        """Hand over the pending events for saving."""
        events, self.pending = self.pending, []
        return events

    @classmethod
    def project(cls, aggregate: Self | None, events: Iterable[Any]) -> Self | None:
        """Projector function for the repository: fold `events` onto `aggregate`."""
        for event in events:
            if aggregate is None:
                aggregate = cls(event.originator_id)
            aggregate.apply(event)
        return aggregate
