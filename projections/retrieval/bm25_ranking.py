"""BM25's arithmetic, shared by every path of `bm25` (Python over fetched postings, numpy over
postings fetched as columns): the same idf, length-normalised tf and integer sums in the same
order, so each path gives the same scores and the same ties.
"""

from __future__ import annotations

import math
from typing import Any

LEXICAL_K = 100
# Long LoCoMo turns repeat their words less than k1 1.2 assumed: k1 2.0, b 0.9 measured +0.35
# points of evidence recall at 2,000 tokens (and 60 hits with neighbours +0.2).
K1, B = 2.0, 0.9
# Each posting's share of a score is summed as an integer count of 1e-9: a float sum depends on
# the order it adds in (DuckDB's parallel sum, the postings' order in Python), which reordered
# documents of equal score from one run to the next; integers add up the same in any order, so
# equal scores are equal and the tie goes to the earlier position.
SCALE = 10**9

# The best documents of a query: their positions, scores (in 1/SCALE) and matched terms.
Chosen = tuple[list[int], list[float], dict[int, list[str]]]


def as_columns(t: Any, position: Any, tf: Any, length: Any) -> tuple[Any, ...]:
    """Postings as numpy columns: term index in the query, position, tf, length."""
    import numpy as np

    return (
        np.asarray(t, dtype=np.int64),
        np.asarray(position, dtype=np.int64),
        np.asarray(tf, dtype=np.float64),
        np.asarray(length, dtype=np.float64),
    )


def joined(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """The postings of `a` then those of `b`, as columns."""
    import numpy as np

    return tuple(np.concatenate(pair) for pair in zip(a, b, strict=True))


def ranked(
    q: list[str], columns: tuple[Any, ...], n: int, avgdl: float, df: dict[str, int]
) -> Chosen:
    """`rank` of the postings of `q` as columns (term index in `q`, position, tf, length),
    with the frequencies `df`: its arithmetic in its order (the idf by `math.log`, the
    share as idf times the length-normalised tf), so the same scores and ties."""
    import numpy as np

    t, position, tf, length = columns
    if not len(t):
        return [], [], {}
    idf = np.array([math.log(1 + (n - df[x] + 0.5) / (df[x] + 0.5)) if x in df else 0.0 for x in q])
    norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avgdl))
    docs, of = unique_positions(position)
    # round() of each share as _rank_here does (both round half to even), summed exactly.
    score = np.bincount(of, weights=np.rint(idf[t] * norm * SCALE), minlength=len(docs))
    return top(q, t, position, docs, score)


def top(q: list[str], t: Any, position: Any, docs: Any, score: Any) -> Chosen:
    """The `LEXICAL_K * 3` best of the documents `docs` scored `score` (in 1/SCALE), by score
    then position, with the terms of `q` each holds (postings `t`, `position`)."""
    import numpy as np

    take = LEXICAL_K * 3
    if len(docs) > take:  # every document scoring at least the take-th best (ties included)
        cut = np.partition(score, len(docs) - take)[len(docs) - take]
        chosen = np.flatnonzero(score >= cut)
    else:
        chosen = np.arange(len(docs))
    chosen = chosen[np.lexsort((docs[chosen], -score[chosen]))][:take]
    best = docs[chosen].tolist()
    matched: dict[int, list[str]] = {p: [] for p in best}
    mine = np.isin(position, docs[chosen])
    for p, i in sorted(zip(position[mine].tolist(), t[mine].tolist(), strict=True)):
        matched[p].append(q[i])  # q is sorted: the terms come in order
    return best, score[chosen].tolist(), matched


def unique_positions(position: Any) -> tuple[Any, Any]:
    """`np.unique(position, return_inverse=True)`, by a stable sort: the postings come as one
    sorted run per term (the index is sorted by term, then position), which a stable sort
    (timsort) merges in a few passes where unique's quicksort sorted them afresh (200,000
    postings at 1M events: 1.2 against 7.6 ms)."""
    import numpy as np

    order = np.argsort(position, kind="stable")
    ranked = position[order]
    first = np.empty(len(ranked), dtype=bool)
    first[:1] = True
    np.not_equal(ranked[1:], ranked[:-1], out=first[1:])
    inverse = np.empty(len(ranked), dtype=np.intp)
    inverse[order] = np.cumsum(first) - 1
    return ranked[first], inverse


def rank(
    postings: list[tuple[Any, ...]], n: int, avgdl: float, df: dict[str, int]
) -> list[tuple[int, float, list[str]]]:
    """The `LEXICAL_K * 3` best documents of `postings` (term, position, tf, length, ...) by
    BM25, then position: (position, score, matched terms). In numpy past a few hundred
    postings (a query with common terms at 1M events scores thousands: ~15 ms in Python),
    with the same arithmetic in the same order (`_rank_here`): the same scores and ties."""
    if len(postings) <= FEW_RANKED:
        return _rank_here(postings, n, avgdl, df)
    names = sorted(df)
    index = {term: i for i, term in enumerate(names)}
    term, position, tf, length = (list(c) for c in list(zip(*postings, strict=True))[:4])
    columns = as_columns([index[x] for x in term], position, tf, length)
    best, scores, matched = ranked(names, columns, n, avgdl, df)
    return [(p, s / SCALE, matched[p]) for p, s in zip(best, scores, strict=True)]


FEW_RANKED = 256


def _rank_here(
    postings: list[tuple[Any, ...]], n: int, avgdl: float, df: dict[str, int]
) -> list[tuple[int, float, list[str]]]:
    """`rank` in Python."""
    score: dict[int, int] = {}  # in 1/SCALE: the same sum in any order of the postings
    matched: dict[int, set[str]] = {}
    for term, position, tf, length, *_ in postings:
        idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
        norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avgdl))
        score[position] = score.get(position, 0) + round(idf * norm * SCALE)
        matched.setdefault(position, set()).add(term)
    best = sorted(score, key=lambda p: (-score[p], p))[: LEXICAL_K * 3]
    return [(p, score[p] / SCALE, sorted(matched[p])) for p in best]
