"""A stopping process records its own turns still waiting on their model as interrupted (the
floor's `interrupt_own_turns`), whichever of the interrupt and the turn's outcome comes first."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mindledger
from mindledger.domain.model_port import Completion
from mindledger.domain.turn import TurnFinishedError

NOW = "2026-05-01T09:00:00Z"
WAIT_S = 120  # a deadline for a busy machine, never a timing threshold


class HeldModel:
    """A model that answers only when released, so a turn can be caught waiting on it."""

    name = "held"

    def __init__(self) -> None:
        self.asked, self.release = threading.Event(), threading.Event()

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        self.asked.set()
        assert self.release.wait(WAIT_S)
        return Completion("Too late.", "held", "test")


@pytest.fixture
def mind(tmp_path: Path) -> Iterator[mindledger.MindLedger]:
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now=NOW)
    with mindledger.open(home, now=NOW) as opened:
        yield opened


def statuses(mind: mindledger.MindLedger) -> list[Any]:
    return [row["status"] for row in mind.query("SELECT status FROM turns ORDER BY seq")]


def interrupt_a_waiting_turn(mind: mindledger.MindLedger) -> tuple[list[Any], list[BaseException]]:
    """Start a turn whose model is held, interrupt the mind's own turns while it waits, then let
    the model answer: what the interrupt marked, and what the turn's thread raised."""
    model = HeldModel()
    failures: list[BaseException] = []

    def run() -> None:
        try:
            mind.chat_turn("Water the ferns at noon", lambda: model)
        except BaseException as e:  # the turn's own save meets a finished turn
            failures.append(e)

    turn = threading.Thread(target=run)
    turn.start()
    assert model.asked.wait(WAIT_S)

    marked = mind.interrupt_own_turns("the server stopped before the model answered")
    model.release.set()
    turn.join(WAIT_S)

    return list(marked), failures


@pytest.mark.floor("interrupt_own_turns")
def test_a_turn_waiting_on_its_model_is_recorded_interrupted_and_its_late_reply_is_not(
    mind: mindledger.MindLedger,
) -> None:
    marked, failures = interrupt_a_waiting_turn(mind)

    assert len(marked) == 1
    assert [type(e) for e in failures] == [TurnFinishedError]
    assert statuses(mind) == ["interrupted"]
    assert "Too late." not in str(mind.log(limit=100).model_dump())
    assert mind.verify().ok is True


def test_a_finished_turn_is_left_as_it_was(mind: mindledger.MindLedger) -> None:
    mind.turn("Water the ferns at noon", model="mock", mock_reply="Noted.")

    marked = mind.interrupt_own_turns("the server stopped")

    assert marked == []
    assert statuses(mind) == ["complete"]


def test_a_turn_that_fails_after_its_message_is_recorded_interrupted_with_its_cause_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.adapters.sqlite_ledger import ChainedSQLiteRecorder

    monkeypatch.setenv("OPENAI_API_KEY", "sk-heron-statue-kept-turn")
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now=NOW)
    real, inserts = ChainedSQLiteRecorder._insert_events, [0]

    def insert_events(self: ChainedSQLiteRecorder, c: Any, events: Any, **kwargs: Any) -> Any:
        inserts[0] += 1
        if inserts[0] == 2:  # the reply's save, after the message's
            raise RuntimeError("the controller fell over: sk-heron-statue-kept-turn\nmore")
        return real(self, c, events, **kwargs)

    with mindledger.open(home, now=NOW) as mind:
        monkeypatch.setattr(ChainedSQLiteRecorder, "_insert_events", insert_events)
        with pytest.raises(RuntimeError) as failed:
            mind.turn("Water the ferns at noon", model="mock", mock_reply="Noted.")
        monkeypatch.undo()
        events = [e for e in mind.log(limit=100).model_dump() if "turn." in e["type"]]

        assert statuses(mind) == ["interrupted"]
    kept = failed.value.__notes__[0].removeprefix("the message is kept as turn ")
    reasons = [e["payload"].get("reason") for e in events if e["aggregate"] == kept]
    assert (
        "it failed before its outcome was recorded (RuntimeError: the controller fell over: "
        "[redacted]); "
        "its message is kept"
    ) in reasons
    assert "sk-heron" not in str(events)
