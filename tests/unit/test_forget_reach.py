"""Which stored events a forget's selector reaches (clear fields only)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.forgetting import Reach, Selector

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
