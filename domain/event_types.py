"""Every event type this version records, registered in `events.EVENT_TYPES` by importing the
module that declares it: an imported ledger is checked against all of them (an event type a
command has not imported yet is still known)."""

from __future__ import annotations

from collections.abc import Mapping

from mindledger.domain import (  # noqa: F401  (imported to register their events)
    ask,
    autonomy,
    commitment,
    concept,
    conversation,
    foreign_import,
    forgetting,
    identity,
    knowledge,
    thread,
    turn,
    turn_numbers,
)
from mindledger.domain.events import EVENT_TYPES, DomainEvent


def known_event_types() -> Mapping[str, type[DomainEvent]]:
    """Topic -> event class, for every event this version can replay."""
    return EVENT_TYPES


def stream_kind(topic: str) -> str:
    """The aggregate kind a topic belongs to (`mind.commitment.opened` -> `commitment`): one
    stream holds the events of one kind of aggregate."""
    parts = topic.split(".")
    return parts[1] if len(parts) > 2 else topic
