"""A reply cut off at the token limit is kept, and every turn records what its model was sent
(checked against what a loopback provider actually received)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from mindledger.compose import (
    Home,
    build_model,
    open_mind,
    open_reader,
    read_model,
    turn_service,
)
from mindledger.domain.model_port import Completion
from mindledger.domain.turn import REPLY_LIMIT, Turn
from mindledger.domain.turn_effects import CUT_OFF_REASON
from mindledger.domain.turns import TurnOutcome
from mindledger.turn_prompt import turn_prompt
from tests.conftest import T0
from tests.integration.fake_provider import failing_provider, scripted_provider
from tests.integration.ledger_factory import sqlite_mind


@pytest.fixture
def home(tmp_path: Path) -> Home:
    sqlite_mind(tmp_path, commands=0)
    return Home(tmp_path)


def scripted_turn(home: Home, text: str, reply: str, finish: str = "stop") -> TurnOutcome:
    """One turn against a loopback provider that answers `reply` with `finish`."""
    with scripted_provider(reply, finish) as (base, _), turn_service(home) as service:
        return service.run(text, build_model(home, "openai/fake", api_base=base))


def test_a_cut_off_reply_is_kept_and_only_its_complete_control_lines_apply(home: Home) -> None:
    reply = "You promised the report.\nCOMMIT: send the report on Friday\nCOMMIT: call Ad"

    outcome = scripted_turn(home, "What did I promise?", reply, "length")

    assert (outcome.status, outcome.cut_off, outcome.finish_reason) == ("complete", True, "length")
    assert outcome.reply == "You promised the report."
    assert len(outcome.opened) == 1
    assert outcome.rejections == [{"line": "COMMIT: call Ad", "reason": CUT_OFF_REASON}]
    with read_model(home) as con:
        row = con.execute("SELECT status, finish_reason, cut_off, reply FROM turns").fetchall()
        texts = [r[0] for r in con.execute("SELECT text FROM commitments").fetchall()]
    assert row == [("complete", "length", True, "You promised the report.")]
    assert texts == ["send the report on Friday"]


def test_a_cut_off_reply_ending_in_plain_text_keeps_that_text(home: Home) -> None:
    outcome = scripted_turn(
        home, "plants?", "COMMIT: water the plants\nThe plants need wat", "length"
    )

    assert outcome.reply == "The plants need wat"
    assert outcome.rejections == [] and len(outcome.opened) == 1


def test_a_reply_that_ends_normally_is_not_marked_cut_off(home: Home) -> None:
    outcome = scripted_turn(home, "hi", "Hello.\nCOMMIT: say hi")

    assert (outcome.cut_off, outcome.finish_reason, len(outcome.opened)) == (False, "stop", 1)
    with read_model(home) as con:
        assert con.execute("SELECT cut_off FROM turns").fetchall() == [(False,)]


def test_an_empty_reply_cut_off_is_still_a_failed_generation(home: Home) -> None:
    outcome = scripted_turn(home, "hello?", "  \n", "length")

    assert outcome.status == "failed" and outcome.failure is not None
    assert outcome.failure["kind"] == "empty"


def test_the_recorded_prompt_is_exactly_what_the_model_received(home: Home) -> None:
    open_mind(home).open_commitment("Send the weekly report on Friday")
    question = "What did I promise to send on Friday?"
    with scripted_provider("The weekly report.") as (base, received), turn_service(home) as service:
        outcome = service.run(question, build_model(home, "openai/fake", api_base=base))

    shown = turn_prompt(home, outcome.turn_id)
    assert shown["messages"] == received[0]["messages"]
    assert "Send the weekly report on Friday" in shown["messages"][0]["content"]
    assert shown["messages"][1] == {
        "role": "user",
        "content": "What did I promise to send on Friday?",
    }
    assert shown["status"] == "complete"


def test_a_failed_turn_records_what_its_model_was_sent(home: Home) -> None:
    with failing_provider(500) as base, turn_service(home) as service:
        outcome = service.run("anyone?", build_model(home, "openai/fake", api_base=base))

    shown = turn_prompt(home, outcome.turn_id)
    assert shown["status"] == "failed"
    assert shown["messages"] is not None and shown["messages"][-1]["content"] == "anyone?"


def test_replies_recorded_before_cut_off_and_prompt_existed_still_load() -> None:
    old = {
        "originator_id": uuid4(),
        "originator_version": 2,
        "timestamp": T0,
        "reply_raw": "hi",
        "reply": "hi",
        "model": "mock",
        "provider": "mock",
        "usage": {},
        "latency_ms": 1.0,
        "finish_reason": "stop",
        "mock": True,
    }

    event = Turn.Replied(**old)

    assert (event.cut_off, event.prompt) == (False, [])


def test_the_prompt_of_a_mock_turn_is_recorded_in_the_ledger(home: Home) -> None:
    model = build_model(home, "mock", mock_reply="ok")
    with turn_service(home) as service:
        outcome = service.run("hi", model)

    rows = [r for r in open_reader(home).rows() if r.topic == "mind.turn.replied"]
    assert b'"prompt"' in rows[0].state and outcome.messages[1]["content"] == "hi"


class SmallModel:
    """A scripted small model: asks for the compact prompt and little memory, and keeps every
    list of messages it was sent."""

    name = "small"
    compact_prompt = True
    memory_budget = 300

    def __init__(self) -> None:
        self.sent: list[list[dict[str, Any]]] = []

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        self.sent.append(messages)
        return Completion("The weekly report.", self.name, "test")


def test_a_small_model_gets_an_unchanging_system_message_and_memory_before_the_question(
    home: Home,
) -> None:
    open_mind(home).open_commitment("Send the weekly report on Friday")
    model = SmallModel()

    with turn_service(home) as service:
        first = service.run("What did I promise to send on Friday?", model, budget=2000)
    with turn_service(home) as service:
        service.run("And to whom?", model, budget=2000)

    (system, user), (system_again, _) = model.sent
    assert system == system_again and "<memory>" not in system["content"]
    assert "COMMIT:" in system["content"] and "THREAD-RESOLVE" not in system["content"]
    assert user["content"].startswith("<memory>")
    assert user["content"].endswith("</memory>\n\nWhat did I promise to send on Friday?")
    assert "Send the weekly report on Friday" in user["content"]
    assert 0 < first.context_tokens <= 300
    assert turn_prompt(home, first.turn_id)["messages"] == model.sent[0]


def test_a_hosted_model_keeps_the_full_protocol_and_memory_in_the_system_message(
    home: Home,
) -> None:
    with scripted_provider("Hi.") as (base, received), turn_service(home) as service:
        service.run("hi", build_model(home, "openai/fake", api_base=base))

    system, user = received[0]["messages"]
    assert "THREAD-RESOLVE" in system["content"] and "<memory>" in system["content"]
    assert user == {"role": "user", "content": "hi"}


def test_a_reply_over_the_limit_is_stored_up_to_it_and_marked_cut_off(home: Home) -> None:
    # A provider may ignore max_tokens: a reply far over the limit, ending in a control line
    # the limit cuts in the middle (it must not apply).
    head = "word " * (REPLY_LIMIT // 5 - 2) + "\n"
    reply = head + "COMMIT: " + "x" * 200 + "\n" + "y" * REPLY_LIMIT

    outcome = scripted_turn(home, "talk a lot", reply)

    assert (outcome.status, outcome.cut_off, outcome.finish_reason) == ("complete", True, "length")
    assert len(outcome.reply_raw) == REPLY_LIMIT and reply.startswith(outcome.reply_raw)
    assert outcome.opened == [] and outcome.rejections[0]["reason"] == CUT_OFF_REASON
    with read_model(home) as con:
        row = con.execute("SELECT cut_off, length(reply_raw) FROM turns").fetchall()
    assert row == [(True, REPLY_LIMIT)]
