"""What an exported event must be for this version to replay it (`EventRules`): a known topic,
a payload its class reads without coercion, a readable time, versions 1, 2, 3... per stream
of one kind."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from mindledger.adapters.export_events import EventProblem, EventRules
from mindledger.adapters.pydantic_mapping import PydanticMapper
from mindledger.domain.commitment import Commitment, episode_id
from mindledger.domain.concept import Concept, concept_id
from mindledger.domain.event_types import known_event_types
from tests.conftest import T0

STREAM = concept_id("user.tea")  # the stream the domain derives for the token


def defined(**changes: Any) -> bytes:
    """The stored state of a `concept.defined`, with `changes` made to it (None deletes)."""
    event = Concept.Defined(
        originator_id=STREAM, originator_version=1, timestamp=T0, token="user.tea", definition="hot"
    )
    state = json.loads(PydanticMapper().to_stored_event(event).state)
    for name, value in changes.items():
        if value is None:
            del state[name]
        else:
            state[name] = value
    return json.dumps(state).encode()


def check(state: bytes, topic: str = Concept.Defined.TOPIC, version: int = 1) -> None:
    EventRules().check(topic, STREAM.hex, version, state, {})


def test_an_event_this_version_wrote_is_accepted() -> None:
    check(defined())


@pytest.mark.parametrize(
    ("state", "topic", "version", "reason"),
    [
        (defined(), "evil.unknown", 1, "unknown event type 'evil.unknown'"),
        (defined(definition=39), Concept.Defined.TOPIC, 1, "field 'definition'"),
        (defined(token=None), Concept.Defined.TOPIC, 1, "field 'token': missing"),
        (defined(evil=1), Concept.Defined.TOPIC, 1, "field 'evil': not a field of this event"),
        (defined(), Concept.Defined.TOPIC, 2, "where 1 belongs (events out of stream order)"),
        (defined(_schema=3), Concept.Defined.TOPIC, 1, "schema 3 where this version reads 1 to 2"),
        (defined(timestamp="tuesday"), Concept.Defined.TOPIC, 1, "the time is not an ISO 8601"),
        (defined(timestamp=1700000000), Concept.Defined.TOPIC, 1, "the time is not an ISO 8601"),
        (b"[1]", Concept.Defined.TOPIC, 1, "the stored state is not a JSON object"),
        # json.loads reads these; the read side's parser (orjson) refuses them
        (defined().replace(b'"hot"', b"NaN"), Concept.Defined.TOPIC, 1, "as the read side parses"),
    ],
)
def test_an_event_this_version_cannot_replay_is_refused_saying_why(
    state: bytes, topic: str, version: int, reason: str
) -> None:
    with pytest.raises(EventProblem) as refused:
        check(state, topic, version)

    assert reason in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_stream_holds_one_aggregate_kind() -> None:
    rules = EventRules()
    rules.check(Concept.Defined.TOPIC, STREAM.hex, 1, defined(), {})

    with pytest.raises(
        EventProblem, match=f"a commitment event in stream {STREAM.hex[:8]} of a concept"
    ):
        rules.check("mind.commitment.closed", STREAM.hex, 2, b'{"timestamp":"x"}', {})


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"definition": 39}, "field 'definition'"),
        ({"token": None}, "field 'token': missing"),
        ({"evil": 1}, "field 'evil': not a field of this event"),
        ({"_schema": 3}, "schema 3 where this version reads 1 to 2"),
        ({"timestamp": "tuesday"}, "the time is not an ISO 8601"),
    ],
)
def test_a_state_the_caller_read_already_is_refused_the_same(
    changes: dict[str, Any], reason: str
) -> None:
    state = defined(**changes)

    with pytest.raises(EventProblem, match=reason):
        EventRules().check(Concept.Defined.TOPIC, STREAM.hex, 1, state, {}, 0, orjson.loads(state))


@pytest.mark.parametrize(
    ("field", "stored"),
    [("episode", "1"), ("episode", True), ("concepts", ["a", 1]), ("concepts", "ab")],
)
def test_a_value_validation_coerced_is_refused(field: str, stored: Any) -> None:
    cid = "c0123456789"
    event = Commitment.Opened(
        originator_id=episode_id(cid, 1),
        originator_version=1,
        timestamp=T0,
        cid=cid,
        episode=1,
        text="Send it",
        origin="user",
        concepts=["a", "b"],
    )
    state = json.loads(PydanticMapper().to_stored_event(event).state)
    state[field] = stored
    data = json.dumps(state).encode()

    with pytest.raises(EventProblem, match=f"field '{field}"):
        EventRules().check(Commitment.Opened.TOPIC, episode_id(cid, 1).hex, 1, data, {})


def test_no_event_class_has_a_serializer_of_its_own() -> None:
    # `_same_fields` takes text, numbers, flags and their lists as they validated, not dumped.
    for cls in known_event_types().values():
        decorators = cls.__pydantic_decorators__
        assert not decorators.field_serializers and not decorators.model_serializers, cls
        for info in cls.model_fields.values():
            assert not [m for m in info.metadata if "Serializer" in type(m).__name__], cls
