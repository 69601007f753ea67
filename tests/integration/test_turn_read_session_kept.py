"""A turn service keeps its read session open between turns (the projector lock held for a
while after a turn): the next turn takes it up where it stopped, every event is projected
exactly once, and a reader of this process or another gets the lock when it asks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings
from mindledger.compose import Home, open_reader, read_model, turn_service
from mindledger.projections.engine import readmodel
from tests.integration.ledger_factory import sqlite_mind


def _turn(service: object, text: str, reply: str) -> None:
    model = LiteLLMModel(ModelSettings(spec="mock", mock_reply=reply))
    outcome = service.run(text, model)  # type: ignore[attr-defined]
    assert outcome.status == "complete", outcome.failure


def _projected_once(home: Home) -> None:
    head = open_reader(home).head()[0]
    with read_model(home) as con:
        positions = [r[0] for r in con.execute("SELECT position FROM events").fetchall()]
        tracked = con.execute("SELECT max(position) FROM tracking").fetchone()
    assert sorted(positions) == sorted(set(positions))
    assert tracked is not None and tracked[0] == head


def test_turns_share_one_session_and_readers_take_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kept until asked for (no clock in the test), then briefly for the other process.
    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)
    sqlite_mind(tmp_path, commands=0)
    home = Home(tmp_path)
    with turn_service(home) as service:
        _turn(service, "Remind me to buy milk", "Will do.\nCOMMIT: buy milk on Friday")
        key = str(Path(home.projector_lock).resolve())
        assert any(Path(k).resolve() == Path(key) for k in readmodel._lingering)
        _turn(service, "And the bread", "Noted.\nCOMMIT: buy bread on Friday")
        # A reader in this process: the kept session gives the lock up, and the read sees
        # both turns' events, each once.
        _projected_once(home)
        assert not readmodel._lingering
        monkeypatch.setattr(readmodel, "LINGER_S", 0.05)
        _turn(service, "What did I ask?", "Milk and bread.")
        # Another process asking for the lock gets it (the session is released in time).
        code = (
            "from pathlib import Path\n"
            "from mindledger.compose import Home, read_model, open_reader\n"
            f"home = Home(Path({str(tmp_path)!r}))\n"
            "with read_model(home) as con:\n"
            "    n = con.execute('SELECT max(position) FROM tracking').fetchone()[0]\n"
            "assert n == open_reader(home).head()[0], n\n"
        )
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
        _turn(service, "Thanks", "You are welcome.")
    assert not readmodel._lingering  # closing the service closes its session
    _projected_once(home)


def test_a_mind_catches_its_kept_session_up_after_a_turn_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `MindLedger` (and so `mind serve`) projects a turn's own events into the session it
    # keeps, in the background after the turn: the next turn has nothing left to catch up.
    import time

    import mindledger
    from mindledger.projections.engine.projector import reached

    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)
    sqlite_mind(tmp_path, commands=0)
    home = Home(tmp_path)
    reader = open_reader(home)
    with mindledger.open(tmp_path) as mind:
        for n in range(3):
            mind.turn(
                f"Remind me of item {n}", model="mock", mock_reply=f"Noted.\nCOMMIT: item {n}"
            )
            head = reader.head()[0]
            deadline = time.monotonic() + 120
            while reached(home.readmodel) < head:  # the settle thread's catch-up
                assert time.monotonic() < deadline, (reached(home.readmodel), head)
                time.sleep(0.01)
        found = mind.recall("item")  # a reader of this process takes the lock from it
        assert found.items
        mind.turn("And one more", model="mock", mock_reply="Done.")
    reader.close()
    assert not readmodel._lingering
    _projected_once(home)


def test_a_one_shot_turn_leaves_the_read_model_and_its_summary_at_the_head(
    tmp_path: Path,
) -> None:
    import mindledger
    from mindledger.projections.engine.projector import reached
    from mindledger.projections.engine.summary import read_summary

    sqlite_mind(tmp_path, commands=0)
    home = Home(tmp_path)
    with mindledger.open(tmp_path) as mind:
        mind.settle_between_turns = False  # `mind turn`: the process ends after it
        mind.turn("Remind me to call", model="mock", mock_reply="Noted.\nCOMMIT: call")
        head = open_reader(home).head()[0]
        # caught up before the turn returned, no thread: the next `mind commitments` prints
        # the new commitment from the summary
        assert reached(home.readmodel) == head
        summary = read_summary(home.readmodel)
        assert summary is not None and summary["position"] == head
        assert "call" in json.dumps(summary)
    _projected_once(home)


def test_a_served_mind_writes_the_summary_as_its_kept_session_closes_not_after_each_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The summary lists every open commitment (~50 MB at 1M events) and no reader can use it
    # while the session holds the lock: rewriting it after each turn cost more than the turn.
    import mindledger
    from mindledger.projections.engine.projector import reached
    from mindledger.projections.engine.summary import read_summary

    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)  # kept between turns, as served
    sqlite_mind(tmp_path, commands=0)
    home = Home(tmp_path)
    with mindledger.open(tmp_path) as mind:
        mind.turn("Remind me to call", model="mock", mock_reply="Noted.\nCOMMIT: call")
        before = read_summary(home.readmodel)
        # the first turn's background catch-up has run: this one waited for it
        mind.turn("And to write", model="mock", mock_reply="Noted.\nCOMMIT: write")
        assert read_summary(home.readmodel) == before
    summary = read_summary(home.readmodel)
    assert summary is not None and summary["position"] == reached(home.readmodel)
    assert "call" in json.dumps(summary)
