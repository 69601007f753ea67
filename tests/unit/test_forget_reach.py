"""Which stored events a forget's selector reaches (clear fields only)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mindledger.domain.forgetting import Reach, Selector

AT = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
SAID = "mind.conversation.message_observed"


@pytest.mark.parametrize(
    ("topic", "speaker", "reached"),
    [
        (SAID, "Caroline", True),
        (SAID, "CAROLINE", True),
        ("mind.turn.started", "caroline", True),
        (SAID, "Melanie", False),
        ("mind.commitment.opened", "Caroline", False),  # a speaker field elsewhere says nothing
    ],
)
def test_a_speaker_selector_reaches_what_that_speaker_said_in_any_case(
    topic: str, speaker: str, reached: bool
) -> None:
    reach = Reach(Selector("speaker", "  caroline "))

    result = reach.event(topic, "a1b2c3d4" * 4, {"speaker": speaker}, AT)

    assert result is reached


TURN = "7e1a" * 8
COMMITMENT = "c0c0" * 8
ITEM = "4b4b" * 8
Stored = list[tuple[str, str, dict[str, Any]]]  # topic, stream, clear fields


def test_the_turn_whose_reply_opened_a_commitment_is_reached_from_its_outcome_on() -> None:
    reach = Reach(Selector("commitment", "c1a2b3c4d5e"))
    ledger: Stored = [
        ("mind.turn.started", TURN, {"speaker": "user"}),
        ("mind.commitment.opened", COMMITMENT, {"cid": "c1a2b3c4d5e"}),
        ("mind.turn.completed", TURN, {"changed_streams": [COMMITMENT]}),
        ("mind.turn.claim_accepted", TURN, {}),
    ]

    found = [reach.event(topic, stream, state, AT) for topic, stream, state in ledger]

    assert found == [False, True, True, True]
    assert reach.late_streams() == {TURN}  # its message, before the outcome, goes too
    assert reach.holds("mind.turn.started") and not reach.holds("mind.import.record_kept")


def test_a_turn_reaches_the_knowledge_its_message_captured_and_what_follows_in_that_item() -> None:
    reach = Reach(Selector("turn", TURN))
    ledger: Stored = [
        ("mind.turn.started", TURN, {"speaker": "user"}),
        ("mind.knowledge.captured", ITEM, {"turn_id": TURN, "role": "owner"}),
        ("mind.knowledge.edited", ITEM, {}),
        ("mind.knowledge.captured", "5" * 32, {"turn_id": "6" * 32}),
    ]

    found = [reach.event(topic, stream, state, AT) for topic, stream, state in ledger]

    assert found == [True, True, True, False]


@pytest.mark.parametrize(("source", "linked"), [("pmm/348c1e14aa4888e1", True), ("pmm/9", False)])
def test_a_conversation_reaches_the_import_that_read_it_once_the_scan_ends(
    source: str, linked: bool
) -> None:
    reach = Reach(Selector("conversation", "4" * 8))
    key = "348c1e14aa4888e1" + "c" * 48
    imported = {"format": "pmm", "source_key": key, "file_sha256": "d" * 64}

    assert reach.event("mind.import.started", "9" * 32, imported, AT) is False
    assert reach.event("mind.conversation.started", "4" * 32, {"source": source}, AT) is True

    assert reach.late_streams() == ({"9" * 32} if linked else set())
    assert reach.holds("mind.import.record_kept") and not reach.holds("mind.turn.started")
