"""Recall's speaker prior: a query naming one participant ranks the other side's messages lower."""

from __future__ import annotations

from mindledger.projections.retrieval import recall
from mindledger.projections.retrieval.item_text import said
from mindledger.projections.retrieval.recall import OTHER_SPEAKER, Pool, rank


def pool_of(named: list[str]) -> Pool:
    pool = Pool()
    pool.query, pool.named = "What pottery did Ana make?", named
    pool.add(
        "lexical",
        [
            said(10, "Ben", None, "pottery pottery, make pottery", "D1:10", "shares pottery"),
            said(11, "Ana", None, "I made a bowl at the pottery studio", "D1:11", "shares pottery"),
            said(12, "user", None, "my pottery", None, "shares pottery"),
        ],
    )
    return pool


def test_the_named_participants_own_words_rank_before_the_other_sides() -> None:
    assert OTHER_SPEAKER < 1.0
    ranked = rank(pool_of(["Ana"]))
    assert [i.id for i in ranked] == [11, 12, 10]
    # the mind's own conversation (no original id) keeps its score
    assert ranked[1].score == round(1 / (recall.RRF_K + 3), 6)


def test_no_prior_when_the_query_names_none_or_several() -> None:
    assert [i.id for i in rank(pool_of([]))] == [10, 11, 12]
    assert [i.id for i in rank(pool_of(["Ana", "Ben"]))] == [10, 11, 12]
