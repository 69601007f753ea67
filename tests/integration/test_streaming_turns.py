"""A turn whose reply streams records exactly what the same turn records without streaming; the
visible reply heard while it streams is the recorded visible reply, with no control line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from mindledger.compose import Home, build_model, open_reader, turn_service
from mindledger.domain.turns import TurnOutcome
from tests.integration.fake_provider import recording_provider
from tests.integration.ledger_factory import sqlite_mind
from tests.integration.streaming_provider import streaming_provider

REPLIES = [
    ("Sure, I will.\nCOMMIT: send the report on Friday\nAnything else?", "stop"),
    ('  - REFLECT: keep it short\r\nFine.\r\nCLAIM:fact={"x": 1}\r\n', "stop"),
    ("You promised the report.\nCOMMIT: send the report on Friday\nCOMMIT: call Ad", "length"),
    ("COMMITTED to nothing.\nCONCEPT: topic.a = a topic\n\n  Bye\n", "stop"),
]
VOLATILE = {"latency_ms", "timestamp", "originator_id", "originator_version", "turn", "turn_id"}


def homes(tmp_path: Path) -> tuple[Home, Home]:
    """Two copies of one mind: the same history and the same secrets, so the same CIDs (keyed
    per mind) in both prompts."""
    sqlite_mind(tmp_path / "streamed", commands=2).close()
    shutil.copytree(tmp_path / "streamed", tmp_path / "whole")
    return Home(tmp_path / "streamed"), Home(tmp_path / "whole")


def recorded(home: Home, outcome: TurnOutcome) -> list[tuple[str, dict[str, Any]]]:
    """The turn's events as stored, without ids and times."""
    reader = open_reader(home)
    positions = set(reader.positions(outcome.notification_ids))
    rows = [r for r in reader.rows(after=min(positions) - 1) if r.position in positions]
    out = []
    for row, opened in zip(rows, reader.open_states(rows), strict=True):
        state = {k: v for k, v in opened.items() if k not in VOLATILE}
        out.append((row.topic, state))
    return out


def turn(home: Home, reply: str, finish: str, heard: list[str] | None) -> TurnOutcome:
    with streaming_provider(reply, finish) as (base, seen), turn_service(home) as service:
        model = build_model(home, "openai/fake", api_base=base)
        outcome = service.run(
            "What did I promise?", model, on_reply=None if heard is None else heard.append
        )
    assert bool(seen[0].get("stream")) is (heard is not None)
    return outcome


@pytest.mark.parametrize(("reply", "finish"), REPLIES)
def test_a_streamed_turn_records_what_the_same_turn_records_whole(
    tmp_path: Path, reply: str, finish: str
) -> None:
    streamed_home, whole_home = homes(tmp_path)
    heard: list[str] = []

    streamed = turn(streamed_home, reply, finish, heard)
    whole = turn(whole_home, reply, finish, None)

    assert "".join(heard) == streamed.reply == whole.reply
    assert not any(
        keyword in piece for piece in heard for keyword in ("COMMIT:", "REFLECT", "CLAIM", "Ad")
    )
    assert recorded(streamed_home, streamed) == recorded(whole_home, whole)
    assert (streamed.opened, streamed.claims, streamed.rejections) == (
        whole.opened,
        whole.claims,
        whole.rejections,
    )
    assert (streamed.usage, streamed.cut_off) == (whole.usage, whole.cut_off)


def test_a_stream_that_breaks_off_records_one_failure_after_the_text_heard(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path)
    sqlite_mind(tmp_path, commands=0)
    heard: list[str] = []
    with (
        streaming_provider("Hello there, friend.\nCOMMIT: x", drop_after=3) as (base, _),
        turn_service(home) as service,
    ):
        outcome = service.run(
            "hi", build_model(home, "openai/fake", api_base=base), on_reply=heard.append
        )

    assert outcome.status == "failed" and outcome.failure is not None
    assert outcome.reply == "" and "".join(heard) == "Hello the"
    topics = [topic for topic, _ in recorded(home, outcome)]
    assert topics == ["mind.turn.started", "mind.turn_numbers.given", "mind.turn.generation_failed"]


def test_a_streamed_failure_is_redacted_like_any_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-streamed-secret-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    home = Home(tmp_path)
    sqlite_mind(tmp_path, commands=0)
    heard: list[str] = []
    with recording_provider(echo_auth=True) as (base, _), turn_service(home) as service:
        outcome = service.run(
            "hi", build_model(home, "openai/fake", api_base=base), on_reply=heard.append
        )

    assert outcome.failure is not None and outcome.failure["kind"] == "auth"
    assert (
        secret not in json.dumps(recorded(home, outcome))
        and secret not in outcome.failure["message"]
    )
    assert heard == []


def test_a_mock_reply_streams_through_litellm(tmp_path: Path) -> None:
    home = Home(tmp_path)
    sqlite_mind(tmp_path, commands=0)
    heard: list[str] = []
    with turn_service(home) as service:
        model = build_model(home, "mock", mock_reply="One.\nCOMMIT: write the tests\nTwo.")
        outcome = service.run("hi", model, on_reply=heard.append)

    assert len(heard) > 1 and "".join(heard) == outcome.reply == "One.\nTwo."
    assert len(outcome.opened) == 1
