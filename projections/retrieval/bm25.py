"""BM25 over the term index (`doc_terms`), with very common query terms scored only where a
rarer query term is.

Document frequencies count every indexed document, live or not (as search engines do until
they merge deleted documents away): that keeps a query to the postings of its terms. Liveness
(open commitment, unresolved thread, current definition) is the `docs.live` flag the projector
clears, read only for the best-scored candidates (a lookup of each stream's current state cost
up to 16 ms at 1M events when ~300 commitments matched).

Common terms (Lucene's CommonTermsQuery, Elasticsearch's `cutoff_frequency`): a term with
hundreds of thousands of postings (the benchmark filler's "item" at 1M events) made the query
score every one of them, though a document holding only such terms is a poor hit. When the
query also has rarer terms with far fewer postings, only documents holding one of those are
candidates, scored with all their terms exactly as plain BM25 would; otherwise plain BM25 runs.
The common terms' document frequencies are kept by the projector (`term_counts`): counting
them was the costliest part of a query at 1M events.

A small mind (at most SMALL_DOCS documents, the query's terms at most FEW_POSTINGS postings) is
scored in Python over the fetched postings, and a larger one's query (the candidates only, for a
query with common terms) in numpy over its postings fetched as columns, by the same formula: a
scoring query's plan has a fixed cost of several milliseconds.
"""

from __future__ import annotations

from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.kept_reads import (
    INDEX_TOTALS,
    TRACKED_TERMS,
    KeptReads,
    kept_rows,
)
from mindledger.projections.retrieval.bm25_ranking import (
    K1,
    LEXICAL_K,
    SCALE,
    B,
    Chosen,
    as_columns,
    joined,
    rank,
    ranked,
    top,
    unique_positions,
)
from mindledger.projections.retrieval.position_rows import rows_at
from mindledger.projections.retrieval.text_index import terms

# A query term with more postings than this is scored only in documents holding a rarer one,
# when the query's common terms have more than COMMON_RATIO times the postings of its rarer ones
# (below that, scoring every posting is as fast: 100k LoCoMo events, bench/recall.py).
COMMON_POSTINGS = 20_000
COMMON_RATIO = 16
# The projector keeps the document frequency of terms with more postings than this when the
# index was last sorted (`term_counts`), so a query's common terms are looked up, not counted
# (counting "item"'s 357,000 postings cost ~2.4 ms per turn at 1M events). Half the cutoff:
# a term becomes common long after it is tracked.
TRACKED_POSTINGS = COMMON_POSTINGS // 2

_SCORE = f"""
    stats AS (SELECT count(*) AS n, avg(length) AS avgdl FROM docs WHERE position <= $as_of),
    best AS (
        SELECT h.position,
               sum(round(ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5)) * h.tf * {K1 + 1}
                   / (h.tf + {K1} * (1 - {B} + {B} * h.length / s.avgdl)) * {SCALE})::BIGINT)
                   / {SCALE} AS score,
               list(DISTINCT h.term ORDER BY h.term) AS matched
        FROM hits h JOIN df USING (term), stats s
        GROUP BY h.position ORDER BY score DESC, h.position LIMIT {LEXICAL_K * 3})
    SELECT b.position, d.kind, d.stream, b.score, b.matched, d.live
    FROM best b JOIN docs d USING (position) ORDER BY b.score DESC, b.position
"""

FULL = f"""
    WITH hits AS (SELECT term, position, tf, length FROM doc_terms
                  WHERE term IN (SELECT unnest($terms)) AND position <= $as_of),
    df AS (SELECT term, count(*) AS df FROM hits GROUP BY term),
    {_SCORE}"""

# Only documents holding a rarer term ($cand), scored in numpy with the counted frequencies:
# the scoring query's plan cost 11 ms at 1M events where fetching these postings costs ~4.
# (`AT_CANDIDATES`, as `_indexed`'s columns: a term by its index in the query.)
AT_CANDIDATES = """
    SELECT term, position, tf, length FROM doc_terms
    WHERE term = $term AND position IN (SELECT unnest($cand))"""
INDEXED_AT_CANDIDATES = (
    "SELECT $i::INTEGER AS t, position, tf, length FROM doc_terms "
    "WHERE term = $term AND position IN (SELECT unnest($cand))"
)
# A document's kind, stream and liveness (`position_rows` adds the positions it reads).
KINDS = "SELECT position, kind, stream, live FROM docs WHERE"


def _per_term(select: str, terms_: list[str]) -> tuple[str, dict[str, Any]]:
    """`select` (with `term = $term`) once per term, UNION ALL: each part reads only its term's
    row groups of the sorted index, where `term IN (...)` read every row group between the first
    term and the last in sort order (postings counts at 1M events: 2.9 instead of 4.7 ms). For a
    long message, planning one part per term would cost more: one `IN` query then."""
    if len(terms_) > PER_TERM_MAX:
        return select.replace("term = $term", "term IN (SELECT unnest($many))"), {"many": terms_}
    sql = " UNION ALL ".join(select.replace("$term", f"$t{i}") for i in range(len(terms_)))
    return sql, {f"t{i}": t for i, t in enumerate(terms_)}


PER_TERM_MAX = 16
COUNT = (
    "SELECT term, count(*) FROM doc_terms WHERE term = $term AND position <= $as_of GROUP BY term"
)

# A small mind's query is scored in Python: the scoring query's plan costs ~4 ms however few its
# postings (each operator has a fixed cost), fetching them ~1 ms (bench/turns.py at 1k events).
SMALL_DOCS = 20_000
FEW_POSTINGS = 5_000
# How many documents, their total length, and the read model's position, kept by the projector:
# scanning `docs` for the average length cost ~2 ms per query at 1M events on a fresh attach.
STATE = INDEX_TOTALS
# The terms whose document frequency the projector keeps (a few dozen), read only when a mind is
# too large to score in Python: as subqueries of STATE they cost more (1.2 against 0.9 ms).
TRACKED = TRACKED_TERMS
STATS = "SELECT count(*), avg(length) FROM docs WHERE position <= $as_of"
POSTINGS = """
    SELECT h.term, h.position, h.tf, h.length, d.kind, d.stream, d.live
    FROM doc_terms h JOIN docs d USING (position)
    WHERE h.term IN (SELECT unnest($terms)) AND h.position <= $as_of LIMIT $few"""


class Fetched:
    """What `best_scored` read for a query, kept so that a query of some of its terms (the
    speaker channel's: the query without the names, `projections.retrieval.speakers`) is
    scored from the postings already fetched (`scored_within`), not fetched again: at 100k
    LoCoMo events the second fetch cost ~9 ms of a recall's CPU. `reads`: what the session's
    projector keeps (STATE and TRACKED, as it wrote them)."""

    def __init__(self, reads: KeptReads | None = None) -> None:
        self.reads = reads
        self.as_of: int | None = None
        self.size, self.n, self.avgdl = 0, 0, 0.0
        self.tracked: dict[str, int] = {}
        self.q: list[str] = []
        self.columns: tuple[Any, ...] | None = None  # (t, position, tf, length) of `q`'s terms
        # None: `columns` hold every posting of `q`; else the common-terms path's frequencies,
        # and `columns` hold the rarer terms' postings and the common terms' at the candidates.
        self.df: dict[str, int] | None = None
        # A query of some of the terms to score with it (the caller's, set before it), and its
        # rows when scored from the same columns: its documents' kinds are read in the same
        # statement as the query's (each such read cost ~2 ms of CPU at 100k LoCoMo events).
        self.sub: list[str] | None = None
        self.sub_rows: list[tuple[Any, ...]] | None = None


def lexical(
    con: duckdb.DuckDBPyConnection, query: str, as_of: int, kept: Fetched | None = None
) -> list[tuple[Any, ...]]:
    """BM25 over the live documents: (position, kind, stream, score, matched terms)
    (`kept`: what was read, for `scored_within`)."""
    q = sorted(set(terms(query)))
    if not q:
        return []
    scored = best_scored(con, q, as_of, kept)
    return [row[:5] for row in scored if row[5]][:LEXICAL_K]


def best_scored(
    con: duckdb.DuckDBPyConnection, q: list[str], as_of: int, kept: Fetched | None = None
) -> list[tuple[Any, ...]]:
    """The `LEXICAL_K * 3` best documents for the terms `q`, by score then position, with
    whether each is live: (position, kind, stream, score, matched terms, live) (only
    documents holding a term of at most `COMMON_POSTINGS` postings, if the query has one).
    `kept`: filled with what was read, for `scored_within`."""
    args: dict[str, Any] = {"terms": q, "as_of": as_of}
    ((size, length, position),) = kept_rows(con, kept.reads if kept else None, STATE, ("tracking",))
    current = as_of >= (position or 0)  # the kept figures are those as of `as_of`
    if current:
        n, avgdl = size, length / size if size else 0.0
    else:
        ((n, avgdl),) = con.execute(STATS, {"as_of": as_of}).fetchall()
    if size <= SMALL_DOCS:
        found = con.execute(POSTINGS, args | {"few": FEW_POSTINGS + 1}).fetchall()
        if len(found) <= FEW_POSTINGS:
            return _scored_here(found, n, avgdl)
    reads = kept.reads if kept else None
    tracked = dict(kept_rows(con, reads, TRACKED, ("term_counts",))) if current else {}
    if kept is not None:
        kept.as_of, kept.size, kept.n, kept.avgdl, kept.tracked = as_of, size, n, avgdl, tracked
        kept.q, kept.columns, kept.df, kept.sub_rows = list(q), None, None, None
    if _all_fetched(q, tracked):
        # No common term the projector counts: every posting is fetched once, its terms'
        # frequencies counted from them, and pruned or not, scored in numpy.
        return _vector_scored(con, q, as_of, n, avgdl, kept=kept)
    known = {t: int(tracked[t]) for t in q if tracked.get(t, 0) > COMMON_POSTINGS}
    df, columns, missing = _with_common(con, q, as_of, known)
    common = [t for t in df if df[t] > COMMON_POSTINGS]
    rare = [t for t in df if t not in common]
    if not rare or sum(df[t] for t in common) <= COMMON_RATIO * sum(df[t] for t in rare):
        return _vector_scored(con, q, as_of, n, avgdl, prune=False, kept=kept)
    # Fetched first: as a list, the positions let DuckDB skip most of a common term's postings,
    # where a join with them scanned all (23 ms for 357,000 postings at 1M events, now ~7).
    # The rarer terms' postings whole, then the common terms' at the documents those name; as
    # columns (tuples of 64,000 postings cost 13-16 ms of CPU at 1M events).
    if need := [t for t in rare if t in missing]:
        columns = joined(columns, _indexed(con, INDEXED_POSTINGS, q, need, {"as_of": as_of}))
    cand = unique_positions(columns[1])[0].tolist()
    columns = joined(columns, _indexed(con, INDEXED_AT_CANDIDATES, q, common, {"cand": cand}))
    chosen = [ranked(q, columns, n, avgdl, df)]
    if kept is not None:
        kept.columns, kept.df = columns, df
        if kept.sub is not None and (also := _sub_chosen(kept, kept.sub, as_of)) is not None:
            rows, kept.sub_rows = _with_kinds(con, [*chosen, also], reads)
            return rows
    return _with_kinds(con, chosen, reads)[0]


def _all_fetched(q: list[str], tracked: dict[str, int]) -> bool:
    """Whether `best_scored` fetches every posting of the terms `q` and scores them with
    pruning (`_vector_scored`) in a mind too large to score in Python: when no term of `q` is
    a common one the projector counts (`tracked`), or `q` has too many terms to count them."""
    return len(q) > PER_TERM_MAX or not any(tracked.get(t, 0) > COMMON_POSTINGS for t in q)


def scored_within(
    con: duckdb.DuckDBPyConnection, kept: Fetched, sub: list[str], as_of: int
) -> list[tuple[Any, ...]]:
    """`best_scored(con, sub, as_of)` for terms `sub` that are some of the terms `best_scored`
    last read into `kept`: scored from the postings it fetched when it fetched them all and
    `best_scored` would fetch and score all of `sub`'s the same way (the same postings,
    frequencies, counts and formula: the same scores, sums and ties); else read again."""
    if kept.sub_rows is not None and kept.sub == sub and kept.as_of == as_of:
        return kept.sub_rows  # scored with the query
    chosen = _sub_chosen(kept, sub, as_of)
    if chosen is None:
        return best_scored(con, sub, as_of)
    return _with_kinds(con, [chosen], kept.reads)[0]


def _sub_chosen(kept: Fetched, sub: list[str], as_of: int) -> Chosen | None:
    """What `best_scored(con, sub, as_of)` would rank, from the columns `kept` holds, when
    they hold every posting it would score (its path taken from the same frequencies): None
    when they do not."""
    if (
        kept.columns is None
        or kept.as_of != as_of
        or not set(sub) <= set(kept.q)
        or kept.size <= SMALL_DOCS
    ):
        return None
    import numpy as np

    columns = _sub_columns(kept, sub)
    n, avgdl = kept.n, kept.avgdl
    if kept.df is None:  # every posting of the query's terms: counted here as they would be
        counts = np.bincount(columns[0], minlength=len(sub)).tolist()
        df = {t: c for t, c in zip(sub, counts, strict=True) if c}
        df |= {t: int(kept.tracked[t]) for t in sub if kept.tracked.get(t, 0) > COMMON_POSTINGS}
    else:
        df = {t: kept.df[t] for t in sub if t in kept.df}
    common = [t for t in df if df[t] > COMMON_POSTINGS]
    # Else a common term's postings are held only at the query's candidates.
    whole = kept.df is None or not common
    if _all_fetched(sub, kept.tracked):
        return _chosen(sub, columns, n, avgdl) if whole else None
    rare = [t for t in df if t not in common]
    if not rare or sum(df[t] for t in common) <= COMMON_RATIO * sum(df[t] for t in rare):
        return _chosen(sub, columns, n, avgdl, prune=False) if whole else None
    # Its candidates (the documents of its rarer terms) are some of the query's.
    of_common = np.isin(columns[0], [sub.index(x) for x in common])
    keep = ~of_common | np.isin(columns[1], columns[1][~of_common])
    return ranked(sub, tuple(c[keep] for c in columns), n, avgdl, df)


def _sub_columns(kept: Fetched, sub: list[str]) -> tuple[Any, ...]:
    """The postings of the terms `sub` among the columns `kept` holds, a term by its index in
    `sub`."""
    import numpy as np

    t, position, tf, length = kept.columns  # type: ignore[misc]
    index = np.array([sub.index(term) if term in sub else -1 for term in kept.q], dtype=np.int64)
    mine = index[t]
    keep = mine >= 0
    return mine[keep], position[keep], tf[keep], length[keep]


# A query's postings as columns, a term by its index in the sorted query (`_vector_scored`).
INDEXED_POSTINGS = (
    "SELECT $i::INTEGER AS t, position, tf, length FROM doc_terms "
    "WHERE term = $term AND position <= $as_of"
)


def _vector_scored(
    con: duckdb.DuckDBPyConnection,
    q: list[str],
    as_of: int,
    n: int,
    avgdl: float,
    prune: bool = True,
    kept: Fetched | None = None,
) -> list[tuple[Any, ...]]:
    """What FULL computes, from the postings fetched as numpy columns and scored there: FULL's
    plan (a join, a grouped sum and a sort in SQL) cost 4-5x the fetch of its postings alone at
    100k LoCoMo events. With `prune`, the query's common terms count only in documents holding
    a rarer one, when their postings outnumber the rarer terms' COMMON_RATIO times (as
    `best_scored` decides it from counted frequencies). `kept`: given the columns fetched."""
    if len(q) > PER_TERM_MAX:
        sql = INDEXED_POSTINGS.replace("$i::INTEGER", "list_position($many, term) - 1").replace(
            "term = $term", "term IN (SELECT unnest($many))"
        )
        cols = con.execute(sql, {"many": q, "as_of": as_of}).fetchnumpy()
        columns = as_columns(cols["t"], cols["position"], cols["tf"], cols["length"])
    else:
        columns = _indexed(con, INDEXED_POSTINGS, q, q, {"as_of": as_of})
    if kept is not None:
        kept.columns = columns
        if kept.sub is not None and (also := _sub_chosen(kept, kept.sub, as_of)) is not None:
            chosen = [_chosen(q, columns, n, avgdl, prune), also]
            rows, kept.sub_rows = _with_kinds(con, chosen, kept.reads)
            return rows
    return _scored_columns(con, q, columns, n, avgdl, prune, kept.reads if kept else None)


def _indexed(
    con: duckdb.DuckDBPyConnection,
    select: str,
    q: list[str],
    which: list[str],
    params: dict[str, Any],
    limit: int | None = None,
) -> tuple[Any, ...]:
    """The postings `select` (with `$i` a term's index, `term = $term`) reads for each of the
    terms `which` of `q` (at most `limit` each), as columns: term index in `q`, position, tf,
    length; one part per term (as `_per_term`)."""
    parts, named = [], {}
    for term in which:
        i = q.index(term)
        part = select.replace("$i", str(i)).replace("$term", f"$t{i}")
        parts.append(part if limit is None else f"({part} LIMIT {limit})")
        named[f"t{i}"] = term
    cols = con.execute(" UNION ALL ".join(parts), named | params).fetchnumpy()
    return as_columns(cols["t"], cols["position"], cols["tf"], cols["length"])


def _scored_columns(
    con: duckdb.DuckDBPyConnection,
    q: list[str],
    columns: tuple[Any, ...],
    n: int,
    avgdl: float,
    prune: bool = True,
    reads: KeptReads | None = None,
) -> list[tuple[Any, ...]]:
    """`_vector_scored`'s scoring of the postings of `q` as columns (term index in `q`,
    position, tf, length)."""
    return _with_kinds(con, [_chosen(q, columns, n, avgdl, prune)], reads)[0]


def _with_kinds(
    con: duckdb.DuckDBPyConnection, chosen: list[Chosen], reads: KeptReads | None = None
) -> list[list[Any]]:
    """The rows of each of `chosen` (`_chosen`'s documents, scores and terms): position, kind,
    stream, score, matched terms, live; the documents' kinds read in one statement, or kept by
    the session (`reads`, `position_rows`: a document's kind and stream never change, and its
    liveness only in a batch that names `docs.live`)."""
    wanted = {p for best, _, _ in chosen for p in best}
    found = rows_at(con, reads, KINDS, ("docs.live",), wanted) if wanted else {}
    kinds = {p: (kind, stream, live) for p, kind, stream, live in found.values()}
    return [
        [
            (p, *kinds[p][:2], s / SCALE, matched[p], kinds[p][2])
            for p, s in zip(best, scores, strict=True)
            if p in kinds
        ]
        for best, scores, matched in chosen
    ]


def _chosen(
    q: list[str], columns: tuple[Any, ...], n: int, avgdl: float, prune: bool = True
) -> Chosen:
    """The best documents for the postings of `q` as columns, best first: their positions,
    scores (in 1/SCALE) and matched terms."""
    import numpy as np

    t, position, tf, length = columns
    if not len(t):
        return [], [], {}
    df = np.bincount(t, minlength=len(q))
    if prune:
        common = df > COMMON_POSTINGS
        rare = (df > 0) & ~common
        if rare.any() and df[common].sum() > COMMON_RATIO * df[rare].sum():
            keep = np.isin(position, position[rare[t]])
            t, position, tf, length = t[keep], position[keep], tf[keep], length[keep]
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    share = idf[t] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avgdl))
    # Whole units of 1/SCALE, summed exactly (as float64 integers, far below 2**53): the same
    # totals, and so the same ties, in any order.
    docs, of = unique_positions(position)
    score = np.bincount(of, weights=np.rint(share * SCALE), minlength=len(docs))
    return top(q, t, position, docs, score)


def _counted(con: duckdb.DuckDBPyConnection, q: list[str], as_of: int) -> dict[str, int]:
    """The document frequency of each of the terms `q` that has postings, counted."""
    counts, named = _per_term(COUNT, q)
    return {t: int(c) for t, c in con.execute(counts, named | {"as_of": as_of}).fetchall() if c}


def _with_common(
    con: duckdb.DuckDBPyConnection, q: list[str], as_of: int, known: dict[str, int]
) -> tuple[dict[str, int], tuple[Any, ...], set[str]]:
    """Document frequencies of the terms `q` when some are common ones the projector counts
    (`known`), the postings fetched of the others (as `_indexed`'s columns), and the terms
    whose postings are not all fetched. The others' postings are fetched, not counted, but
    only up to the number at which the common terms would not be pruned (their postings over
    COMMON_RATIO), so a query that will be scored in full fetches little; a term past it is
    counted instead."""
    import numpy as np

    df = dict(known)
    most = min(COMMON_POSTINGS, sum(known.values()) // COMMON_RATIO) + 1
    fetch = [t for t in q if t not in known]
    if fetch:
        columns = _indexed(con, INDEXED_POSTINGS, q, fetch, {"as_of": as_of}, limit=most)
    else:
        columns = as_columns([], [], [], [])
    found = np.bincount(columns[0], minlength=len(q)).tolist()
    over = {t for t in fetch if found[q.index(t)] >= most}
    if over:
        df |= _counted(con, sorted(over), as_of)
        keep = ~np.isin(columns[0], [q.index(t) for t in over])
        columns = tuple(c[keep] for c in columns)
    df.update((t, found[i]) for i, t in enumerate(q) if found[i] and t not in over)
    return df, columns, set(known) | over


def _scored_here(postings: list[tuple[Any, ...]], n: int, avgdl: float) -> list[tuple[Any, ...]]:
    """What the scoring query computes, for postings that carry their document's kind and
    stream (the frequencies are those of the postings: all of the query's terms)."""
    df: dict[str, int] = {}
    for term, *_ in postings:
        df[term] = df.get(term, 0) + 1
    docs = {position: (kind, stream, live) for _, position, _, _, kind, stream, live in postings}
    return [
        (p, *docs[p][:2], score, matched, docs[p][2])
        for p, score, matched in rank(postings, n, avgdl, df)
    ]
