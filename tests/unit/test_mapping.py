"""Pydantic events round-trip through stored events, with stable topics and upcasting."""

from __future__ import annotations

import json
from uuid import uuid4

import pytest
from eventsourcing.persistence import MapperDeserialisationError, StoredEvent

from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.pydantic_mapping import PydanticMapper
from mindledger.domain.concept import Concept
from mindledger.domain.thread import Thread
from tests.conftest import T0


def thread_opened() -> Thread.Opened:
    return Thread.Opened(
        originator_id=uuid4(),
        originator_version=1,
        timestamp=T0,
        label="Why?",
        content="Because",
        origin="user",
    )


def test_an_event_round_trips_with_its_explicit_topic() -> None:
    mapper = PydanticMapper()
    event = thread_opened()

    stored = mapper.to_stored_event(event)

    assert stored.topic == "mind.thread.opened"
    assert mapper.to_domain_event(stored) == event


def test_an_event_with_two_sealed_fields_round_trips_sealed() -> None:
    mapper = PydanticMapper(keys=MemoryKeyStore())
    event = thread_opened()

    stored = mapper.to_stored_event(event)

    assert b"Because" not in stored.state
    assert mapper.to_domain_event(stored) == event


def test_events_are_frozen() -> None:
    event = Concept.Aliased(originator_id=uuid4(), originator_version=2, timestamp=T0, alias="x")

    with pytest.raises(ValueError, match="frozen"):
        event.alias = "y"  # type: ignore[misc]


def test_a_schema_1_concept_definition_is_upcast_on_read() -> None:
    mapper = PydanticMapper()
    old = StoredEvent(
        originator_id=uuid4(),
        originator_version=1,
        topic="mind.concept.defined",
        state=json.dumps(
            {"timestamp": T0.isoformat(), "token": "user.identity", "text": "Who the user is"}
        ).encode(),
    )

    event = mapper.to_domain_event(old)

    assert isinstance(event, Concept.Defined)
    assert event.definition == "Who the user is"


def test_a_current_event_is_stored_with_its_schema_version() -> None:
    event = Concept.Defined(
        originator_id=uuid4(), originator_version=1, timestamp=T0, token="a", definition="b"
    )

    state = json.loads(PydanticMapper().to_stored_event(event).state)

    assert state["_schema"] == 2


def test_an_unknown_topic_is_a_clear_error() -> None:
    stored = StoredEvent(
        originator_id=uuid4(), originator_version=1, topic="mind.future.thing", state=b"{}"
    )

    with pytest.raises(MapperDeserialisationError, match="unknown event topic"):
        PydanticMapper().to_domain_event(stored)
