"""BM25's pruning of very common query terms gives exactly the full query's answer."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.importers import import_chat
from mindledger.compose import Home, open_reader, read_model
from mindledger.projections.retrieval import bm25, bm25_ranking
from mindledger.projections.retrieval.text_index import terms
from tests.integration.ledger_factory import sqlite_mind

EVERYWHERE = 2**62


class Spy:
    """A connection that remembers the SQL it ran."""

    def __init__(self, con: Any) -> None:
        self.con, self.sql = con, []  # type: list[str]

    def execute(self, sql: str, params: Any = None) -> Any:
        self.sql.append(sql)
        return self.con.execute(sql, params)


def scored_in_numpy(spy: Spy) -> bool:
    """Whether postings were fetched as columns (`bm25._indexed`)."""
    return any(" AS t, position, tf, length" in sql for sql in spy.sql)


def at_candidates(spy: Spy) -> bool:
    """Whether common terms' postings were fetched only at the candidates (the rarer terms'
    documents)."""
    return any("unnest($cand)" in sql for sql in spy.sql)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Home:
    folder = tmp_path_factory.mktemp("bm25")
    words = ["tea", "coffee", "juice", "water"]
    lines = [
        {
            "role": "user" if i % 2 else "assistant",
            # "today" and "item" are in every document, the number in a fifth, the drink in a
            # quarter, "zebra" in ten.
            "content": f"today item {i % 5} with {words[i % 4]}"
            + (" and a zebra" if i % 200 == 0 else "")
            + " again" * (i % 3),
        }
        for i in range(2000)
    ]
    path = folder / "chat.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    import_chat(sqlite_mind(folder, commands=0), path)
    return Home(folder)


def bm25_by_hand(con: Any, q: list[str], rare: set[str]) -> list[tuple[int, float]]:
    """Plain BM25 in Python over every posting, keeping documents that hold a rare term."""
    n, avgdl = con.execute("SELECT count(*), avg(length) FROM docs").fetchone()
    postings = con.execute(
        "SELECT term, position, tf, length FROM doc_terms WHERE term IN (SELECT unnest($t))",
        {"t": q},
    ).fetchall()
    df: dict[str, int] = {}
    for term, *_ in postings:
        df[term] = df.get(term, 0) + 1
    scores: dict[int, float] = {}
    holds_rare: set[int] = set()
    k1, b = bm25_ranking.K1, bm25_ranking.B
    for term, position, tf, length in postings:
        idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
        norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))
        scores[position] = scores.get(position, 0.0) + idf * norm
        if term in rare:
            holds_rare.add(position)
    kept = [(p, s) for p, s in scores.items() if not rare or p in holds_rare]
    return sorted(kept, key=lambda ps: (-round(ps[1], 9), ps[0]))[: bm25_ranking.LEXICAL_K * 3]


@pytest.mark.parametrize(
    ("query", "rare"),
    [
        ("today item zebra", {"zebra"}),  # "today" and "item" count only beside "zebra"
        ("today item 3 tea", set()),  # 4,000 common postings, 900 rarer: plain BM25
        ("today item", set()),  # only common terms: plain BM25
        ("tea 3 again", set()),  # no common term: plain BM25
    ],
)
@pytest.mark.parametrize("per_term_max", [16, 0])  # a query per term, or one for many terms
def test_common_terms_count_only_in_documents_holding_a_rarer_one(
    corpus: Home, monkeypatch: pytest.MonkeyPatch, query: str, rare: set[str], per_term_max: int
) -> None:
    monkeypatch.setattr(bm25, "COMMON_POSTINGS", 1000)
    monkeypatch.setattr(bm25, "SMALL_DOCS", 0)  # the SQL paths, as in a large mind
    monkeypatch.setattr(bm25, "PER_TERM_MAX", per_term_max)
    q = sorted(set(terms(query)))
    with read_model(corpus) as con:
        spy = Spy(con)
        found = bm25.best_scored(spy, q, EVERYWHERE)  # type: ignore[arg-type]
        expected = bm25_by_hand(con, q, {t for r in rare for t in terms(r)})

    assert [row[0] for row in found] == [p for p, _ in expected]
    assert [row[3] for row in found] == pytest.approx([s for _, s in expected])
    # No common term is tracked here: every posting fetched once, pruned or not in numpy.
    assert bm25.FULL not in spy.sql and scored_in_numpy(spy)


@pytest.mark.parametrize("query", ["tea 3 again", "today zebra", "juice water 4"])
def test_a_small_mind_is_scored_in_python_as_the_query_would(corpus: Home, query: str) -> None:
    q = sorted(set(terms(query)))
    with read_model(corpus) as con:
        spy = Spy(con)
        found = bm25.best_scored(spy, q, EVERYWHERE)  # type: ignore[arg-type]
        full = con.execute(bm25.FULL, {"terms": q, "as_of": EVERYWHERE}).fetchall()

    assert bm25.FULL not in spy.sql and bm25.POSTINGS in spy.sql
    assert [(r[0], r[1], r[2], list(r[4])) for r in found] == [
        (r[0], r[1], r[2], list(r[4])) for r in full
    ]
    assert [r[3] for r in found] == pytest.approx([r[3] for r in full])


@pytest.mark.parametrize("few_rows", [50, 1])  # counts kept by a CASE, or by a join
def test_tracked_document_frequencies_stay_exact_and_give_the_same_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, few_rows: int
) -> None:
    from mindledger.projections.engine import maintenance
    from mindledger.projections.engine import projector as projector_module
    from mindledger.projections.engine.projector import Projector

    monkeypatch.setattr(bm25, "COMMON_POSTINGS", 200)
    monkeypatch.setattr(bm25, "TRACKED_POSTINGS", 100)
    monkeypatch.setattr(bm25, "SMALL_DOCS", 0)
    monkeypatch.setattr(maintenance, "SORT_MIN_ROWS", 0)
    monkeypatch.setattr(projector_module, "FEW_ROWS", few_rows)

    def chat(name: str, lines: list[str]) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps({"role": "user", "content": c}) + "\n" for c in lines))
        return path

    app = sqlite_mind(tmp_path, commands=0)
    # "item" in every document, "tea" in a third, "zebra" in ten; "late" only after the sort.
    import_chat(
        app, chat("a.jsonl", [f"item {i % 7} tea" * (i % 3 == 0) + f" item{i}" for i in range(600)])
    )
    import_chat(app, chat("b.jsonl", [f"item zebra {i}" for i in range(10)]))
    reader = open_reader(Home(tmp_path))
    projector = Projector(tmp_path / "rm.duckdb")
    projector.catch_up(reader, maintain=True)  # sorts the index and counts its common terms
    sorted_at = projector.position()
    import_chat(app, chat("c.jsonl", [f"item late {i}" for i in range(300)]))
    projector.catch_up(reader)  # keeps the counts current, no sort
    con = projector.con

    tracked = dict(con.execute("SELECT term, df FROM term_counts").fetchall())
    actual = dict(con.execute("SELECT term, count(*) FROM doc_terms GROUP BY term").fetchall())
    assert {"item", "tea"} <= set(tracked) and all(tracked[t] == actual[t] for t in tracked)
    assert actual["late"] == 300  # common now, not tracked: counted when a query names it
    # BM25's N and total length, kept per batch, are the documents' count and total length.
    kept = con.execute("SELECT docs, length FROM tracking").fetchall()
    assert kept == con.execute("SELECT count(*), sum(length)::BIGINT FROM docs").fetchall()

    # The digits are in too many documents for "item" to be pruned: plain BM25.
    for query, rare in (
        ("item zebra", {"zebra"}),
        ("item late zebra", {"zebra"}),
        ("tea zebra item", {"zebra"}),
        ("item 3 4 5 6", set()),
    ):
        q = sorted(set(terms(query)))
        spy = Spy(con)
        found = bm25.best_scored(spy, q, EVERYWHERE)  # type: ignore[arg-type]
        expected = bm25_by_hand(con, q, rare)
        assert [row[0] for row in found] == [p for p, _ in expected]
        assert [row[3] for row in found] == pytest.approx([s for _, s in expected])
        counted = [sql for sql in spy.sql if "count(*) FROM doc_terms" in sql]
        # The tracked common terms are looked up; "late", common since the sort, is counted.
        assert bool(counted) == ("late" in query)
        assert scored_in_numpy(spy) and at_candidates(spy) == bool(rare)
        # Before the read model's position the tracked counts are not used: counted instead.
        earlier = bm25.best_scored(con, q, sorted_at)
        con.execute("CREATE OR REPLACE TEMP TABLE saved AS SELECT * FROM term_counts")
        con.execute("DELETE FROM term_counts")
        assert earlier == bm25.best_scored(con, q, sorted_at)
        assert found == bm25.best_scored(con, q, EVERYWHERE)
        con.execute("INSERT INTO term_counts SELECT * FROM saved")
    projector.close()


@pytest.mark.parametrize("query", ["today item", "today item 3 tea", "tea again"])
def test_equal_scores_rank_by_position_in_any_summing_order(corpus: Home, query: str) -> None:
    # The corpus repeats each document shape hundreds of times: many exactly equal scores.
    # A float sum in DuckDB's parallel aggregate (or over postings in another order) once
    # ranked those ties differently from run to run.
    q = sorted(set(terms(query)))
    args = {"terms": q, "as_of": EVERYWHERE}
    with read_model(corpus) as con:
        con.execute("SET threads = 4")
        runs = [con.execute(bm25.FULL, args).fetchall() for _ in range(5)]
        postings = con.execute(bm25.POSTINGS, args | {"few": 10**6}).fetchall()
        n, avgdl = con.execute("SELECT count(*), avg(length) FROM docs").fetchone()
        in_numpy = bm25._vector_scored(con, q, EVERYWHERE, n, avgdl, prune=False)
    assert all(run == runs[0] for run in runs)
    assert [(r[0], r[1], r[2], list(r[4]), r[5]) for r in in_numpy] == [
        (r[0], r[1], r[2], list(r[4]), r[5]) for r in runs[0]
    ]
    assert [r[3] for r in in_numpy] == pytest.approx([r[3] for r in runs[0]])
    scores = [row[3] for row in runs[0]]
    assert len(set(scores)) < len(scores)  # there are ties to break
    for (p, *_, s), (q_, *_, t) in zip(runs[0], runs[0][1:], strict=False):
        assert s > t or (s == t and p < q_)
    df: dict[str, int] = {}
    for term, *_ in postings:
        df[term] = df.get(term, 0) + 1
    in_python = [bm25_ranking.rank(order, n, avgdl, df) for order in (postings, postings[::-1])]
    assert in_python[0] == in_python[1]
    assert [p for p, _, _ in in_python[0]] == [row[0] for row in runs[0]]


@pytest.mark.parametrize(
    ("query", "sub"),
    [
        ("today item zebra tea", "item zebra"),  # the sub-query pruned, the query too
        ("today item zebra tea", "today tea"),  # the sub-query not pruned
        ("tea 3 again zebra", "zebra 3"),
        ("today item", "juice"),  # a term the query does not have: read again
    ],
)
@pytest.mark.parametrize("per_term_max", [16, 0])
def test_some_of_a_querys_terms_score_from_its_postings_as_a_fresh_query(
    corpus: Home, monkeypatch: pytest.MonkeyPatch, query: str, sub: str, per_term_max: int
) -> None:
    # The speaker channel scores the query without the names from the lexical channel's
    # postings (`bm25.scored_within`): the same answer as scoring it afresh.
    monkeypatch.setattr(bm25, "COMMON_POSTINGS", 1000)
    monkeypatch.setattr(bm25, "SMALL_DOCS", 0)
    monkeypatch.setattr(bm25, "PER_TERM_MAX", per_term_max)
    q, s = sorted(set(terms(query))), sorted(set(terms(sub)))
    with read_model(corpus) as con:
        kept = bm25.Fetched()
        bm25.best_scored(con, q, EVERYWHERE, kept)
        spy = Spy(con)
        within = bm25.scored_within(spy, kept, s, EVERYWHERE)  # type: ignore[arg-type]
        fresh = bm25.best_scored(con, s, EVERYWHERE)

    assert within == fresh and within
    assert scored_in_numpy(spy) == (not set(s) <= set(q))  # postings read again only then


@pytest.mark.parametrize(
    ("query", "sub"),
    [
        ("today item zebra tea", "item zebra"),
        ("today item zebra tea", "today tea"),
        ("tea 3 again zebra", "zebra 3"),
        ("today item", "juice"),
    ],
)
def test_a_sub_query_named_first_is_scored_with_the_query_as_afresh(
    corpus: Home, monkeypatch: pytest.MonkeyPatch, query: str, sub: str
) -> None:
    # Named before the query is scored (`Fetched.sub`, the speaker channel's), its rows come
    # with the query's (one read of the documents' kinds): the same rows as scoring it afresh,
    # and the query's own rows unchanged.
    monkeypatch.setattr(bm25, "COMMON_POSTINGS", 1000)
    monkeypatch.setattr(bm25, "SMALL_DOCS", 0)
    q, s = sorted(set(terms(query))), sorted(set(terms(sub)))
    with read_model(corpus) as con:
        kept = bm25.Fetched()
        kept.sub = s
        rows = bm25.best_scored(con, q, EVERYWHERE, kept)
        within = bm25.scored_within(con, kept, s, EVERYWHERE)
        assert rows == bm25.best_scored(con, q, EVERYWHERE)
        assert within == bm25.best_scored(con, s, EVERYWHERE) and within


@pytest.fixture(scope="module")
def tracked_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A read model whose index is sorted with its common terms counted (`term_counts`), at
    a scale where COMMON_POSTINGS is 300: "item" in all 1,410 documents and "tea" in 667
    (both counted), each tree in ~286 (counted, not common), "yak" in 50, "zebra" in 10;
    "late" in 400, common only after the sort (not counted)."""
    from mindledger.projections.engine import maintenance
    from mindledger.projections.engine.projector import Projector

    folder = tmp_path_factory.mktemp("tracked")

    def chat(name: str, lines: list[str]) -> Path:
        path = folder / name
        path.write_text("".join(json.dumps({"role": "user", "content": c}) + "\n" for c in lines))
        return path

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bm25, "COMMON_POSTINGS", 300)
        patch.setattr(bm25, "TRACKED_POSTINGS", 150)
        patch.setattr(maintenance, "SORT_MIN_ROWS", 0)
        app = sqlite_mind(folder, commands=0)
        trees = ["amber", "birch", "cedar", "dune", "ember", "fjord", "grove"]
        lines = [
            f"item {trees[i % 7]}" + " tea" * (i % 3 == 0) + " yak" * (i % 40 == 0) + f" item{i}"
            for i in range(1000)
        ]
        import_chat(app, chat("a.jsonl", lines))
        import_chat(app, chat("b.jsonl", [f"item zebra {i}" for i in range(10)]))
        reader = open_reader(Home(folder))
        projector = Projector(folder / "rm.duckdb")
        projector.catch_up(reader, maintain=True)
        import_chat(app, chat("c.jsonl", [f"item late {i}" for i in range(400)]))
        projector.catch_up(reader)
        projector.close()
    return folder / "rm.duckdb"


@pytest.mark.parametrize(
    ("query", "sub", "read_again"),
    [
        # The query pruned ("item" and "tea" only beside the rarer terms):
        ("item tea yak zebra", "item yak", False),  # and the sub-query
        ("item tea yak zebra", "yak zebra", False),  # no common term in the sub-query
        ("item tea yak zebra", "tea yak", True),  # the sub-query not pruned: all of "tea"
        ("item late zebra", "late zebra", True),  # "late" common, not counted: all of it
        # The query scored in full (the trees' postings too many to prune "item"):
        ("item zebra amber birch cedar dune", "item zebra", False),  # the sub-query pruned
        ("item zebra amber birch cedar dune", "item amber", False),  # the sub-query in full
        ("item zebra amber birch cedar dune", "amber birch", False),
    ],
)
def test_a_sub_query_of_a_query_with_counted_common_terms_scores_as_afresh(
    tracked_index: Path, monkeypatch: pytest.MonkeyPatch, query: str, sub: str, read_again: bool
) -> None:
    # The speaker channel's sub-query, scored from the postings the query fetched whichever
    # way the query and it were scored, or read again where those lack some it needs.
    from mindledger.projections.engine.duckdb_files import connect

    monkeypatch.setattr(bm25, "COMMON_POSTINGS", 300)
    monkeypatch.setattr(bm25, "SMALL_DOCS", 0)
    q, s = sorted(set(terms(query))), sorted(set(terms(sub)))
    con = connect(tracked_index, read_only=True)
    try:
        fresh_query = bm25.best_scored(con, q, EVERYWHERE)
        fresh = bm25.best_scored(con, s, EVERYWHERE)
        kept, first = bm25.Fetched(), Spy(con)
        bm25.best_scored(first, q, EVERYWHERE, kept)  # type: ignore[arg-type]
        spy = Spy(con)
        within = bm25.scored_within(spy, kept, s, EVERYWHERE)  # type: ignore[arg-type]
        named_first = bm25.Fetched()
        named_first.sub = s
        rows = bm25.best_scored(con, q, EVERYWHERE, named_first)
        with_query = bm25.scored_within(con, named_first, s, EVERYWHERE)
    finally:
        con.close()

    assert within == fresh and within and with_query == fresh and rows == fresh_query
    assert at_candidates(first) == ("tea" in query or "late" in query)  # the query pruned
    assert any("doc_terms" in sql for sql in spy.sql) == read_again
    assert (named_first.sub_rows is None) == read_again
