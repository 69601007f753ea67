"""bench/answers.py end to end with a scripted model (no timing asserted)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bench.answers import CONDITIONS, locomo_answers, markdown, smoke_answers, summary
from mindledger.domain.model_port import Completion
from tests.conftest import LOCOMO


class MemoryEcho:
    """A scripted model: answers with the last line of its memory block, or "I do not know"
    without one; it keeps every list of messages it was sent."""

    name = "scripted"

    def __init__(self) -> None:
        self.sent: list[list[dict[str, Any]]] = []

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        self.sent.append(messages)
        prompt = "\n".join(m["content"] for m in messages)
        if "</memory>" not in prompt:
            return Completion("I do not know.", self.name, "test")
        lines = prompt.split("</memory>")[0].strip().splitlines()
        return Completion(lines[-1], self.name, "test", finish_reason="length")


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIND_NOW", "2024-01-01T00:00:00Z")


@pytest.mark.skipif(not LOCOMO.exists(), reason="needs the shared LoCoMo file")
def test_each_question_is_asked_under_the_three_conditions_and_scored() -> None:
    model = MemoryEcho()

    answers = locomo_answers(model, LOCOMO, conversations=1, per_category=1, budget=600)

    assert len(answers) == 12 and len(model.sent) == 12  # 4 categories x 3 conditions
    assert [a.condition for a in answers[:3]] == list(CONDITIONS)
    assert sorted({a.category for a in answers}) == [1, 2, 3, 4]
    none = [a for a in answers if a.condition == "none"]
    assert all(a.reply == "I do not know." and a.context_tokens == 0 for a in none)
    for recall, bm25 in zip(answers[0::3], answers[1::3], strict=True):
        assert recall.question == bm25.question
        assert 0 < bm25.context_tokens <= recall.context_tokens  # BM25 gets the same room
        assert recall.cut_off and 0.0 <= recall.f1 <= 1.0
    rows = summary(answers)
    assert {(r["category"], r["condition"]) for r in rows} >= {("all", c) for c in CONDITIONS}
    assert "| all | recall | 4 |" in markdown(rows)


def test_the_smoke_questions_are_asked_after_their_facts_were_told() -> None:
    model = MemoryEcho()

    answers = smoke_answers(model, budget=600)

    told, asked = model.sent[:6], model.sent[6:]
    assert [m[-1]["content"] for m in told][1] == "My sister is called Ada."
    assert len(asked) == 12 and [a.condition for a in answers[:2]] == ["recall", "none"]
    sister = next(a for a in answers if a.question == "What is my sister called?")
    assert "My sister is called Ada." in str(asked[answers.index(sister)])
    assert [r["condition"] for r in summary(answers)] == ["recall", "none"]
