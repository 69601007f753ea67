"""Retries never duplicate: a failed turn attempted again is the same turn (`Turn.Retried` on
its stream, then the attempt's outcome), its number and message unchanged; an attempt whose
process died is recovered like a message; the floor's request memory answers a repeat of a
completed request from its record, attempts a failed one again, and refuses a key reused for
another request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mindledger
from mindledger.domain.application import Mind
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.model_port import ModelFailure
from mindledger.domain.turn import Turn, TurnFinishedError
from mindledger.turn_attempts import (
    IdempotencyKeyReusedError,
    RequestMemory,
    TurnRequest,
    checked_key,
    failure_class,
    fingerprint,
)
from tests.unit.fakes import FakeModel, turn_service

NOW = "2026-05-01T09:00:00Z"
DOWN = ModelFailure("server", "the model server failed: 503")


def topics(app: Mind) -> list[str]:
    return [n.topic for n in app.recorder.select_notifications(1, 10_000)]


def test_a_failed_turn_attempted_again_is_the_same_turn_with_its_attempts_recorded(
    app: Mind,
) -> None:
    service = turn_service(app)
    failed = service.run("Is the bridge open?", FakeModel(failure=DOWN))
    service.run("Is the bridge open?", FakeModel(failure=DOWN), retry_of=failed.turn_id)

    done = service.run("Is the bridge open?", FakeModel("It is."), retry_of=failed.turn_id)

    turn = app.load(Turn, failed.turn_id)
    assert (done.turn_id, done.seq, done.status, done.reply) == (
        failed.turn_id,
        failed.seq,
        "complete",
        "It is.",
    )
    assert (turn.status, turn.attempts) == ("complete", 3)
    assert topics(app).count("mind.turn.started") == 1
    assert topics(app).count("mind.turn.retried") == 2
    assert topics(app).count("mind.turn_numbers.given") == 1


def test_only_a_failed_turn_is_attempted_again_and_a_refusal_writes_nothing(app: Mind) -> None:
    service = turn_service(app)
    done = service.run("hello", FakeModel("hi"))
    before = topics(app)

    with pytest.raises(TurnFinishedError, match="not failed"):
        service.retry(done.turn_id)

    assert topics(app) == before


def test_an_attempt_whose_process_died_is_recovered_as_interrupted(app: Mind) -> None:
    failed = turn_service(app, pid=41).run("lost?", FakeModel(failure=DOWN))
    turn_service(app, pid=41).retry(failed.turn_id)  # the process dies during this attempt

    turn_service(app, pid=42, dead={41}).run("next", FakeModel("ok"))

    assert app.load(Turn, failed.turn_id).status == "interrupted"


@pytest.mark.parametrize(
    ("kind", "retried"),
    [
        ("connection", "transient"),
        ("timeout", "transient"),
        ("rate_limit", "transient"),
        ("server", "transient"),
        ("auth", "refused"),
        ("bad_request", "refused"),
        ("context_too_long", "refused"),
        ("bad_response", "failed"),
        ("empty", "failed"),
    ],
)
def test_a_failure_is_worth_retrying_only_when_the_same_request_may_pass(
    kind: str, retried: str
) -> None:
    assert failure_class(kind) == retried


def test_a_request_is_the_same_whatever_its_key_order_and_the_memory_stays_bounded() -> None:
    memory = RequestMemory(limit=2)
    done: Any = object()

    for key in ("a", "b", "c"):
        memory.keep(TurnRequest("token", {"text": key}, key=key), done)

    assert fingerprint({"a": 1, "b": [2]}) == fingerprint({"b": [2], "a": 1})
    assert memory.earlier(TurnRequest("token", {"text": "a"}, key="a")) is None
    assert memory.earlier(TurnRequest("token", {"text": "c"}, key="c")) is done
    assert memory.earlier(TurnRequest("other token", {"text": "c"}, key="c")) is None


@pytest.fixture
def mind(tmp_path: Path) -> Iterator[mindledger.MindLedger]:
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now=NOW)
    with mindledger.open(home, now=NOW) as opened:
        yield opened


MOCK = {"model": "mock", "mock_reply": "Noted."}


@pytest.mark.floor("attempt_turn")
def test_a_repeated_request_is_answered_from_its_record_and_a_reused_key_is_refused(
    mind: mindledger.MindLedger,
) -> None:
    keyed = TurnRequest("token", {"text": "Buy milk"}, key="milk-1")
    first = mind.attempt_turn(keyed, "Buy milk", MOCK)
    head = mind.status().head

    repeat = mind.attempt_turn(keyed, "Buy milk", MOCK)
    retried = mind.attempt_turn(TurnRequest("token", {"text": "Buy milk"}, retry=True), "x", MOCK)
    with pytest.raises(IdempotencyKeyReusedError):
        mind.attempt_turn(TurnRequest("token", {"text": "Buy eggs"}, key="milk-1"), "x", MOCK)
    with pytest.raises(InvalidInputError, match="Idempotency-Key"):
        mind.attempt_turn(TurnRequest("token", {"text": "x"}, key="bad key"), "x", MOCK)

    assert (first.replayed, repeat.replayed, retried.replayed) == (False, True, True)
    assert repeat.done.result == retried.done.result == first.done.result
    assert mind.status().head == head


@pytest.mark.floor("attempt_turn")
def test_a_repeated_request_whose_model_failed_is_another_attempt_of_its_turn(
    mind: mindledger.MindLedger,
) -> None:
    asked = TurnRequest("token", {"text": "Is the bridge open?"}, retry=True)
    model = FakeModel(failure=DOWN)
    mind._models[("fake/model", None)] = model  # the failure injected where models are kept
    args = {"model": "fake/model"}
    failed = mind.attempt_turn(asked, "Is the bridge open?", args)
    model.failure, model.reply = None, "It is."

    done = mind.attempt_turn(asked, "Is the bridge open?", args)

    events = [e.type for e in mind.log(limit=100)]
    assert failed.done.result.status == "failed" and done.done.result.status == "complete"
    assert done.done.result.turn == failed.done.result.turn
    assert events.count("mind.turn.started") == 1 and events.count("mind.turn.retried") == 1
    assert mind.verify().ok


def test_a_ledger_with_a_retried_turn_replays_exports_and_verifies(
    mind: mindledger.MindLedger, tmp_path: Path
) -> None:
    model = FakeModel(failure=DOWN)
    mind._models[("fake/model", None)] = model  # the failure injected where models are kept
    asked = TurnRequest("token", {"text": "Ping"}, retry=True)
    mind.attempt_turn(asked, "Ping", {"model": "fake/model"})
    model.failure, model.reply = None, "Pong."
    mind.attempt_turn(asked, "Ping", {"model": "fake/model"})

    replayed = mind.replay(check=True)
    exported = mind.export(tmp_path / "out", "jsonl")
    transcript = mind.export(tmp_path / "md", "md")

    assert replayed.identical is True
    assert mindledger.verify_export(exported.file).ok is True
    text = Path(transcript.file).read_text()
    assert "## Turn 1 (failed)" in text and "## Turn 1 (completed)" in text
    assert "attempt 2: its message sent again" in text and "Pong." in text


@given(st.text(max_size=300))
def test_any_idempotency_key_is_taken_or_refused_in_one_line(key: str) -> None:
    try:
        taken = checked_key(key)
    except InvalidInputError as e:
        assert e.param == "Idempotency-Key" and "\n" not in str(e)
    else:
        assert taken == key and 0 < len(key) <= 255 and key.isascii() and key.isprintable()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text(), JSON, max_size=5))
def test_any_json_body_has_one_fingerprint_whatever_its_key_order(body: dict[str, Any]) -> None:
    reordered = dict(reversed(list(body.items())))

    assert fingerprint(body) == fingerprint(reordered)


@pytest.mark.parametrize("status", [503, 424, 400, 502])
def test_the_command_line_prints_a_failed_turn_the_server_answered_with_its_status(
    status: int,
) -> None:
    from mindledger.cli.server_client import _answer

    turn = {"turn": "abc", "status": "failed", "failure": {"kind": "server", "message": "503"}}
    body = {"error": {"message": "generation failed", "type": "x", "param": None, "code": "c"}}

    answered = _answer(status, json.dumps({**body, "mind_turn": turn}).encode())

    assert answered == turn  # printed as `mind turn` prints it, never run again here
