"""A provider that quotes the request in its error (a proxy showing what it refused) never
puts the prompt's words into the failure a turn records: the prompt is recorded apart (sealed
in the turn's context scope, which a forget that reaches its words takes), the failure message
is the turn's own, and a client's forgotten conversation stayed readable in it (found trying
decision 0020 as an attacker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mindledger
from tests.integration.fake_provider import recording_provider

CANARY = "Kestrel-7788"
HISTORY = [
    {"role": "user", "content": f"My locker code is {CANARY}.\nKeep it to yourself."},
    {"role": "assistant", "content": "I will keep it to myself."},
]


@pytest.mark.floor("turn", "forget")
@pytest.mark.parametrize("echo", ["text", "json"])
def test_a_provider_quoting_the_prompt_leaves_no_word_of_it_in_the_failure(
    tmp_path: Path, echo: str
) -> None:
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo")
    with recording_provider(echo_messages=echo) as (base, _), mindledger.open(home) as mind:
        done = mind.turn("Which code?", model="openai/fake", api_base=base, history=HISTORY)

        assert done.status == "failed" and done.failure is not None
        assert done.failure.message.startswith("the model provider rejected the request: refused")
        assert CANARY not in done.failure.message and "yourself" not in done.failure.message
        events = mind.log(limit=100).model_dump(mode="json")
        begun = next(e for e in events if e["type"] == "mind.conversation.started")
        mind.forget("conversation", begun["aggregate"])

        assert CANARY not in json.dumps(mind.log(limit=100).model_dump(mode="json"))
        assert mind.verify().ok
