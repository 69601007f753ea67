"""A failed turn attempted again is one turn with its attempts, on SQLite and on PostgreSQL: the
attempt's `turn.retried` and its outcome append to the turn's stream, the read model shows the
last attempt, and the ledger verifies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import mindledger
from mindledger.domain.model_port import ModelFailure
from mindledger.turn_attempts import TurnRequest
from tests.integration.backends import BACKENDS, mind_with_a_commitment
from tests.unit.fakes import FakeModel


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


def test_a_retried_turn_is_one_turn_on_either_backend(mind: mindledger.MindLedger) -> None:
    model = FakeModel(failure=ModelFailure("timeout", "no answer in 1 s"))
    mind._models[("fake/model", None)] = model  # the failure injected where models are kept
    asked = TurnRequest("token", {"text": "Still there?"}, retry=True)
    failed = mind.attempt_turn(asked, "Still there?", {"model": "fake/model"})
    model.failure, model.reply = None, "Yes."

    done = mind.attempt_turn(asked, "Still there?", {"model": "fake/model"})

    rows = mind.query("SELECT seq, status FROM turns ORDER BY seq")
    assert done.done.result.turn == failed.done.result.turn
    assert [(r["seq"], r["status"]) for r in rows] == [(1, "complete")]
    assert mind.verify().ok is True
