"""The Python API takes anything a program may pass: a wrong type, a lone surrogate, a number
out of range. Each call returns or raises one `MindError`; a refused call changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mindledger

ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=40),
    st.binary(max_size=10),
    st.lists(st.text(max_size=5), max_size=3),
    st.sampled_from(["mock", "verify", "turn", "a\ud800b", "", " ", "2026-05-01T09:00:00Z", "3"]),
)

CALLS = {
    "turn": lambda m, a, b: m.turn(a, model="mock", mock_reply=b),
    "turn budget": lambda m, a, b: m.turn("hi", model="mock", mock_reply="ok", budget=a),
    "ask": lambda m, a, b: m.ask(a, model="mock", mock_reply="I do not know."),
    "recall": lambda m, a, b: m.recall(a, as_of=b),
    "commit": lambda m, a, b: m.commit(a, concepts=b),
    "log": lambda m, a, b: m.log(a, b),
    "remember": lambda m, a, b: m.remember("4471", question="Code?", state=a, freshness=b),
    "forget": lambda m, a, b: m.forget(a, b, dry_run=True),
    "threads": lambda m, a, b: m.threads(a, b),
    "tick": lambda m, a, b: m.tick(model=a, mock_reply=b),
    "interrupt_own_turns": lambda m, a, b: m.interrupt_own_turns(a),
}


@pytest.fixture(scope="module")
def mind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[mindledger.MindLedger]:
    home = tmp_path_factory.mktemp("fuzz") / "mind"
    mp = pytest.MonkeyPatch()
    mp.setenv("MIND_NOW", "2026-05-01T09:00:00Z")
    mp.setenv("MIND_NO_SERVER", "1")
    mindledger.init(home, name="Echo")
    with mindledger.open(home) as opened:
        # The scripted model by default: a call without `model` is then fuzzed in milliseconds
        # instead of a real generation on the embedded model (minutes on a busy CI machine; the
        # embedded model's own turn is tested in tests/e2e/test_cli_turns.py).
        opened.set_model("mock")
        yield opened
    mp.undo()


@pytest.mark.parametrize("use_case", sorted(CALLS))
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(a=ANYTHING, b=ANYTHING)
def test_a_call_returns_or_raises_one_mind_error_and_a_refusal_writes_nothing(
    mind: mindledger.MindLedger, use_case: str, a: Any, b: Any
) -> None:
    head = mind.status().head

    try:
        CALLS[use_case](mind, a, b)
    except mindledger.MindError as e:
        message = str(e)
        assert "\n" not in message and "Traceback" not in message
        assert mind.status().head == head
    # anything else (TypeError, KeyError, ...) fails the test


def test_a_refused_turn_records_nothing(mind: mindledger.MindLedger, tmp_path: Path) -> None:
    head = mind.status().head

    for bad in (None, 5, b"hi", "a\ud800b"):
        with pytest.raises(mindledger.InvalidInputError):
            mind.turn(bad, model="mock", mock_reply="ok")  # type: ignore[arg-type]
    with pytest.raises(mindledger.InvalidInputError) as refused:
        mind.turn("hi", model="mock", mock_reply="a\ud800b")
    assert refused.value.param == "mock_reply" and "`mock_reply` holds" in str(refused.value)
    with pytest.raises(mindledger.InvalidInputError):
        mind.turn("hi", model="mock", mock_reply=5)  # type: ignore[arg-type]
    with pytest.raises(mindledger.InvalidInputError):
        mind.tick(budget=-5, model="mock", mock_reply="ok")

    assert mind.status().head == head
