"""Recall's day prior: a message counts more when the messages said on its day match too."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mindledger.projections.retrieval import day_prior, recall
from mindledger.projections.retrieval.item_text import said
from mindledger.projections.retrieval.recall import Pool, rank

MAY_8 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
JULY_12 = datetime(2023, 7, 12, 9, 0, tzinfo=UTC)


def pool() -> Pool:
    """Four matches about the pottery class on one day, one in passing on another, a concept."""
    p = Pool()
    p.query = "What did Ana make at the pottery class?"
    p.add(
        "lexical",
        [
            said(10, "Ana", MAY_8, "I signed up for a pottery class", "D1:1", "shares pottery"),
            said(90, "Ana", JULY_12, "pottery is fun, anyway", "D7:3", "shares pottery"),
            said(11, "Ana", MAY_8, "the class made bowls", "D1:2", "shares class"),
            said(12, "Ana", MAY_8, "my bowl has a crack", "D1:3", "shares make"),
            said(13, "Ben", MAY_8, "show me the bowl!", "D1:4", "shares make"),
            (50, "concept", "[concept pottery] clay shaped and fired", "pottery", "shares pottery"),
        ],
    )
    return p


def test_a_match_alone_on_its_day_ranks_after_the_matches_of_the_day_that_holds_the_topic() -> None:
    ranked = rank(pool())

    assert [i.id for i in ranked] == [10, 11, 12, 13, 50, 90]


def test_an_undated_item_keeps_its_fused_score() -> None:
    ranked = {i.id: i for i in rank(pool())}

    assert ranked[50].score == round(1 / (recall.RRF_K + 6), 6)
    assert ranked[10].score == round(1 / (recall.RRF_K + 1), 6)


def test_without_the_prior_the_fused_order_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(day_prior, "DAY_PRIOR", 0)

    ranked = rank(pool())

    assert [i.id for i in ranked] == [10, 90, 11, 12, 13, 50]
