"""The LoCoMo bench's scoring: Wilson intervals, session recall, leave-one-conversation-out."""

from __future__ import annotations

import pytest

from bench.locomo_scoring import Scored, gold_ids, leave_one_out, session_recall, wilson
from mindledger.domain.context_port import ContextItem


def test_wilson_interval_matches_the_textbook_figures() -> None:
    low, high = wilson(0.5, 100)

    assert (low, high) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert wilson(1.0, 20)[1] == 1.0 and wilson(1.0, 20)[0] == pytest.approx(0.8389, abs=1e-4)


def test_gold_ids_normalise_the_files_spellings() -> None:
    assert gold_ids(["D8:6; D9:17", "D:11:26", "D30:05"]) == {"D8:6", "D9:17", "D11:26", "D30:5"}


def item(source_id: str) -> ContextItem:
    return ContextItem(1, "message", "lexical", "", 0.0, 0, "text", source_id)


def test_session_recall_ranks_sessions_by_their_first_turn() -> None:
    ranked = [item(s) for s in ("D1:1", "D1:2", "D2:1", "D3:4", "D4:1", "D5:1", "D6:1", "D7:2")]

    found = session_recall(ranked, {"D7:9", "D3:1"})

    assert found == {"s@5": 0.5, "s@10": 1.0}


def scored(sample: str, recall: float) -> Scored:
    return Scored(sample, 1, by_budget={500: {"recall": recall, "at10": recall}})


def test_each_conversation_is_scored_with_the_setting_best_on_the_others() -> None:
    # Setting 1 wins on a and b, setting 0 on c alone: c is scored with setting 1, a and b
    # with whichever of the two is best on the other two.
    by_setting = [
        [scored("a", 0.5), scored("b", 0.5), scored("c", 1.0)],
        [scored("a", 0.9), scored("b", 0.9), scored("c", 0.0)],
    ]

    held, chosen = leave_one_out(by_setting, [500])

    assert chosen == {"a": 0, "b": 0, "c": 1}
    assert [r.by_budget[500]["recall"] for r in held] == [0.5, 0.5, 0.0]
