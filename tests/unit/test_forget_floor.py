"""The forget orchestration on the floor: stopped at each of its crash points, it is finished
once by the next use case that opens the mind, and nothing forgotten can be read afterwards."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import mindledger
from mindledger import forget
from tests.conftest import Result

CANARY = "canary-7Q4Z-heron"


class Crashed(BaseException):
    """Stands for the process dying at a crash point (nothing after it runs)."""


@pytest.fixture
def told(cli: Callable[..., Result], mind_home: Path) -> str:
    """A mind holding the canary in one commitment and something else in another (no model
    call: the orchestration is the same for every selector)."""
    with mindledger.open(mind_home) as mind:
        cid = mind.commit(f"Change the locker code {CANARY}").cid
        mind.commit("Count the herons by the river")
    return str(cid)


def forgotten_events(mind: mindledger.MindLedger) -> list[mindledger.Event]:
    return [e for e in mind.log(limit=1000) if e.type == "mind.forget.forgotten"]


@pytest.mark.parametrize("point", ["after-keys", "after-event", "after-purge"])
def test_a_forget_stopped_at_a_crash_point_is_finished_once_by_the_next_opening(
    told: str, mind_home: Path, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash_at(name: str) -> None:
        if name == point:
            raise Crashed(name)

    monkeypatch.setattr(forget, "_crash_point", crash_at)
    with mindledger.open(mind_home) as mind, pytest.raises(Crashed):
        mind.forget("commitment", told)
    monkeypatch.undo()

    assert (mind_home / "forget.pending").exists()
    with mindledger.open(mind_home) as mind:
        texts = [str(row["text"] or "") for row in mind.query("SELECT text FROM commitments")]
        events = forgotten_events(mind)
        verified = mind.verify()

    assert not (mind_home / "forget.pending").exists()
    assert len(events) == 1
    assert not any(CANARY in text for text in texts)
    assert "Count the herons by the river" in texts
    assert verified.ok is True


def test_a_dry_run_counts_and_changes_nothing(told: str, mind_home: Path) -> None:
    with mindledger.open(mind_home) as mind:
        head = mind.status().head
        plan = mind.forget("commitment", told, dry_run=True)
        texts = [str(row["text"] or "") for row in mind.query("SELECT text FROM commitments")]

        assert plan.dry_run is True and plan.forgotten is False
        assert plan.events > 0 and plan.keys > 0
        assert mind.status().head == head
    assert any(CANARY in text for text in texts)


def test_a_second_forget_of_the_same_turn_says_it_is_already_forgotten(
    told: str, mind_home: Path
) -> None:
    with mindledger.open(mind_home) as mind:
        first = mind.forget("commitment", told)
        again = mind.forget("commitment", told)
        events = forgotten_events(mind)

    assert first.forgotten is True
    assert again.forgotten is False and again.already_forgotten is True
    assert len(events) == 1


def test_an_unknown_selector_is_refused_before_anything_is_read(mind_home: Path) -> None:
    with mindledger.open(mind_home) as mind, pytest.raises(mindledger.InvalidInputError):
        mind.forget("colour", "blue")
