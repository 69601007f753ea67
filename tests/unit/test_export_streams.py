"""What the domain assumes of an export's streams (`StreamRules`), fed events as the export
check decodes them: each on the stream its payload derives, opened by its first event, its
sealed fields sealed once the ledger seals, commitment episodes and turn numbers in order,
names of what exists."""

from __future__ import annotations

import re
import uuid
from typing import Any
from uuid import UUID

import pytest

from mindledger.adapters.export_streams import StreamProblem, StreamRules
from mindledger.domain.commitment import Commitment, episode_id
from mindledger.domain.concept import Concept, concept_id
from mindledger.domain.conversation import Conversation, conversation_id
from mindledger.domain.event_types import known_event_types
from mindledger.domain.events import DomainEvent
from mindledger.domain.forgetting import Forgetting
from mindledger.domain.identity import IDENTITY_ID, Identity
from mindledger.domain.thread import Thread
from mindledger.domain.turn import Turn
from mindledger.domain.turn_numbers import TURN_NUMBERS_ID, TurnNumbers
from tests.conftest import T0

ENVELOPE = {"$sealed": "ab" * 16, "c": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="}
CID = "c0123456789"
FORGOTTEN: dict[str, Any] = {
    "forget_id": "f1",
    "selector": "turn",
    "value": "x",
    "counts": {},
    "events": 0,
    "keys": 0,
    "context_turns": 0,
    "role": "owner",
    "via": "cli",
}


class Feed:
    """A StreamRules fed events at positions 1, 2, 3..., each stored as `raw` says (its sealed
    fields as envelopes unless told otherwise)."""

    def __init__(self) -> None:
        self.rules, self.position = StreamRules(), 0
        self(Identity.Created, IDENTITY_ID, ledger_id="x", name="Echo", model="mock")

    def __call__(
        self, cls: type[DomainEvent], stream: UUID, version: int = 1, clear: bool = False, **f: Any
    ) -> None:
        event = cls(originator_id=stream, originator_version=version, timestamp=T0, **f)
        raw = event.model_dump(mode="json")
        for name in cls.SEALED:
            if raw.get(name) is not None and not clear:
                raw[name] = ENVELOPE
        self.position += 1
        kind = cls.TOPIC.split(".")[1]
        self.rules.check(self.position, kind, stream, event, raw)


def opened(feed: Feed, episode: int = 1, clear: bool = False) -> None:
    feed(
        Commitment.Opened,
        episode_id(CID, episode),
        cid=CID,
        episode=episode,
        text="Send the report",
        origin="owner",
        clear=clear,
    )


def closed(feed: Feed, episode: int = 1, version: int = 2) -> None:
    feed(Commitment.Closed, episode_id(CID, episode), version, reason="sent")


def started(feed: Feed, seq: int, turn: UUID) -> None:
    feed(Turn.Started, turn, text="hi", speaker="user", seq=seq, model="mock", pid=1, host="h")


def given(feed: Feed, seq: int, turn: UUID, version: int) -> None:
    feed(TurnNumbers.Given, TURN_NUMBERS_ID, version, seq=seq, turn_id=turn.hex, unfinished=[])


def test_a_consistent_history_passes() -> None:
    feed, one, two = Feed(), uuid.uuid4(), uuid.uuid4()

    feed(Identity.DescriptionRevised, IDENTITY_ID, 2, text="curious")
    opened(feed)
    closed(feed)
    opened(feed, 2)
    feed(Concept.Defined, concept_id("user.tea"), token="user.tea", definition="hot")
    feed(Concept.Related, concept_id("user.tea"), 2, target="user.cup", relation="in")
    feed(Concept.Defined, concept_id("user.cup"), token="user.cup", definition="a cup")
    feed(Concept.Bound, concept_id("user.cup"), 2, kind="commitment", target=CID)
    started(feed, 1, one)  # a turn numbered before the ledger gave numbers
    started(feed, 2, two)
    given(feed, 2, two, 1)
    started(feed, 3, one := uuid.uuid4())
    given(feed, 3, one, 2)
    feed.rules.finish()


@pytest.mark.parametrize(
    ("cls", "fields", "kind"),
    [
        (Identity.Created, {"ledger_id": "x", "name": "Mallory", "model": "m"}, "identity"),
        (Concept.Defined, {"token": "user.tea", "definition": "hot"}, "concept"),
        (Conversation.Started, {"source": "chat/1", "participants": []}, "conversation"),
        (
            Commitment.Opened,
            {"cid": CID, "episode": 1, "text": "t", "origin": "owner"},
            "commitment",
        ),
        (Forgetting.Forgotten, FORGOTTEN, "forget"),
    ],
)
def test_an_event_off_the_stream_its_payload_derives_is_refused(
    cls: type[DomainEvent], fields: dict[str, Any], kind: str
) -> None:
    with pytest.raises(StreamProblem, match=f"a second stream for one {kind}"):
        Feed()(cls, uuid.uuid4(), **fields)


def test_the_derived_streams_are_the_domains() -> None:
    feed = Feed()

    feed(Conversation.Started, conversation_id("chat/1"), source="chat/1", participants=[])
    feed(Forgetting.Forgotten, Forgetting.stream("f1"), **FORGOTTEN)

    assert feed.position == 3


def test_a_stream_begins_with_its_opening_event_which_comes_once() -> None:
    feed = Feed()
    with pytest.raises(StreamProblem, match="a commitment stream must begin with"):
        closed(feed, version=1)

    with pytest.raises(StreamProblem, match=re.escape("mind.identity.created again, as version 2")):
        feed(Identity.Created, IDENTITY_ID, 2, ledger_id="x", name="Mallory", model="mock")


def test_a_ledger_begins_with_its_identity() -> None:
    rules = StreamRules()
    event = Concept.Defined(
        originator_id=concept_id("user.tea"),
        originator_version=1,
        timestamp=T0,
        token="user.tea",
        definition="hot",
    )

    with pytest.raises(StreamProblem, match="a ledger begins with its mind's"):
        rules.check(1, "concept", event.originator_id, event, event.model_dump(mode="json"))


def test_a_file_without_events_is_no_mind_s_ledger() -> None:
    rules = StreamRules()

    with pytest.raises(StreamProblem, match="no events: a ledger begins with") as raised:
        rules.finish()

    assert raised.value.position == 1
    Feed().rules.finish()  # the mind's opening event alone is a ledger


def test_commitment_episodes_open_in_order_after_the_last_one_closed_and_close_once() -> None:
    feed = Feed()
    opened(feed)

    with pytest.raises(StreamProblem, match="episode 2 opened while episode 1 is open"):
        opened(feed, 2)
    with pytest.raises(StreamProblem, match="episode 3 opened where episode 2 comes next"):
        opened(feed, 3)
    closed(feed)
    with pytest.raises(StreamProblem, match="episode 1 is closed again"):
        closed(feed, version=3)


def test_plain_text_is_refused_once_the_ledger_seals_but_read_in_a_ledger_from_before() -> None:
    before, after = Feed(), Feed()
    opened(before, clear=True)  # written before sealing: every field in the clear
    closed(before)
    opened(after)

    with pytest.raises(StreamProblem, match="field 'text' is in the clear where this ledger"):
        opened(after, 2, clear=True)


def test_a_field_sealed_later_may_be_clear_until_the_ledger_first_sealed_it() -> None:
    feed, tea = Feed(), concept_id("user.tea")
    feed(Concept.Defined, tea, token="user.tea", definition="hot")
    feed(Concept.Defined, concept_id("user.cup"), token="user.cup", definition="a cup")
    feed(Concept.Related, tea, 2, clear=True, target="user.cup", relation="in")
    feed(Concept.Related, tea, 3, target="user.cup", relation="on")

    with pytest.raises(StreamProblem, match="field 'relation' is in the clear"):
        feed(Concept.Related, tea, 4, clear=True, target="user.cup", relation="by")


@pytest.mark.parametrize(
    "envelope",
    [
        {"$sealed": "ab" * 16},
        {"$sealed": "zz" * 16, "c": ENVELOPE["c"]},
        {"$sealed": "ab" * 16, "c": "not base64!"},
        {"$sealed": "ab" * 16, "c": "AAAA"},
        {"$sealed": "ab" * 16, "c": ENVELOPE["c"], "x": 1},
    ],
)
def test_a_malformed_envelope_is_refused(envelope: dict[str, Any]) -> None:
    rules = StreamRules()
    event = Identity.DescriptionRevised(
        originator_id=IDENTITY_ID, originator_version=2, timestamp=T0, text="[forgotten]"
    )
    raw = {**event.model_dump(mode="json"), "text": envelope}

    with pytest.raises(StreamProblem, match="field 'text' is not a well-formed envelope"):
        rules.check(2, "identity", IDENTITY_ID, event, raw)


def test_turn_numbers_are_given_once_in_order_right_after_their_turn() -> None:
    feed, one, two = Feed(), uuid.uuid4(), uuid.uuid4()
    started(feed, 1, one)
    given(feed, 1, one, 1)

    with pytest.raises(StreamProblem, match="is number 3, where 2 comes next"):
        started(feed, 3, two)
    started(feed, 2, two)
    with pytest.raises(
        StreamProblem, match=re.escape("this event is not its mind.turn_numbers.given")
    ):
        feed(Concept.Defined, concept_id("user.tea"), token="user.tea", definition="hot")
    with pytest.raises(
        StreamProblem, match=re.escape("took number 2 and no mind.turn_numbers.given")
    ) as e:
        feed.rules.finish()
    assert e.value.position == 5  # the second turn (a refused event counts a position here)


def test_a_number_given_to_another_turn_or_twice_is_refused() -> None:
    feed, one = Feed(), uuid.uuid4()
    started(feed, 1, one)

    with pytest.raises(StreamProblem, match="number 1 for turn"):
        given(feed, 1, uuid.uuid4(), 1)
    given(feed, 1, one, 1)
    with pytest.raises(StreamProblem, match="number 2 for turn"):
        given(feed, 2, one, 2)


def test_names_of_what_does_not_exist_are_refused() -> None:
    feed, tea = Feed(), concept_id("user.tea")
    feed(Concept.Defined, tea, token="user.tea", definition="hot")

    with pytest.raises(StreamProblem, match="binds commitment 'c9999999999', never opened"):
        feed(Concept.Bound, tea, 2, kind="commitment", target="c9999999999")
    feed(Concept.Related, tea, 2, target="user.nowhere", relation="in")
    with pytest.raises(
        StreamProblem, match=re.escape("concept 'user.nowhere' is never defined")
    ) as e:
        feed.rules.finish()
    assert e.value.position == 4


def test_nothing_follows_a_resolved_thread() -> None:
    feed, thread = Feed(), uuid.uuid4()
    feed(Thread.Opened, thread, label="Launch", content="May?", origin="owner")
    feed(Thread.Resolved, thread, 2, verdict="dissolved", reason="moot", artifact=None, by=None)

    with pytest.raises(StreamProblem, match=f"thread {thread.hex[:8]} is resolved"):
        feed(Thread.Mentioned, thread, 3)


def test_no_event_class_derives_from_another() -> None:
    # The stream rules find an event's class by identity (`type(event) is ...`), which is
    # isinstance only while no event class derives from another.
    classes = list(known_event_types().values())

    assert not [(a, b) for a in classes for b in classes if a is not b and issubclass(a, b)]
