"""A stopping server's turn still waiting on its model is recorded interrupted, and its late
reply is refused, on SQLite and on PostgreSQL (the interrupt writes through a ledger connection
of its own while the turn's holds the mind's write lock)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import mindledger
from mindledger.domain.turn import TurnFinishedError
from tests.integration.backends import BACKENDS, mind_with_a_commitment
from tests.unit.test_turn_stop import interrupt_a_waiting_turn


@pytest.fixture(params=BACKENDS)
def mind(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[mindledger.MindLedger]:
    monkeypatch.delenv("MIND_BACKEND", raising=False)
    with (
        mind_with_a_commitment(request.param, tmp_path / "mind") as home,
        mindledger.open(home.path) as opened,
    ):
        yield opened


def test_a_turn_waiting_on_its_model_is_interrupted_on_either_backend(
    mind: mindledger.MindLedger,
) -> None:
    marked, failures = interrupt_a_waiting_turn(mind)

    assert len(marked) == 1
    assert [type(e) for e in failures] == [TurnFinishedError]
    statuses = [row["status"] for row in mind.query("SELECT status FROM turns ORDER BY seq")]
    assert statuses == ["interrupted"]
    assert mind.verify().ok is True
