"""The spans channel: windows of consecutive messages, scored as one document each, lift their
messages into the fused ranking.

Evidence that spans turns (a multi-hop question's two facts said a few turns apart, an answer
after the question that matched) is missed by a ranking of single messages: each turn alone
shares too few of the query's words. A window is SPAN_SIZE consecutive ledger positions, the
next starting SPAN_SIZE - SPAN_OVERLAP later; its messages (those of its anchor's conversation)
are scored together by BM25: a term's frequency is summed over them, the length too, against
SPAN_SIZE times the average message length. The SPAN_K best windows enter, each message at its
window's rank plus SPAN_PENALTY.

No index of its own (no projection work, no postings of windows): the candidate windows are
those holding the lexical channel's SPAN_FROM best message hits, scored from the message
postings of the query's terms at their positions (one read), their messages and lengths
(one read) and the terms' document frequencies (one read; a term's messages stand in for its
windows). Windows are cut by ledger position: an imported conversation's messages are
consecutive positions; a live conversation's turns are several events each, so a window holds
fewer of them. Parameters: leave-one-conversation-out on LoCoMo (bench/locomo.py --tune,
docs/benchmarks/locomo-spans.md).
"""

from __future__ import annotations

import math
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.retrieval.bm25 import AT_CANDIDATES, _counted, _per_term
from mindledger.projections.retrieval.bm25_ranking import K1, B
from mindledger.projections.retrieval.item_text import Found, said
from mindledger.projections.retrieval.text_index import terms

SPAN_SIZE = 6
SPAN_OVERLAP = 1
SPAN_K = 10  # 0 turns the channel off
SPAN_FROM = 50  # the lexical message hits whose windows are candidates
SPAN_PENALTY = 10  # added to a window's rank for its messages: below the best lexical hits

# The entering windows' messages (a join with the wanted positions, as the lexical channel's
# texts are read: cheaper than IN over the messages table).
_TEXTS = (
    "SELECT m.position, coalesce(m.conversation, ''), m.speaker, m.time, m.text, m.source_id "
    "FROM (SELECT unnest($p) AS position) w JOIN messages m USING (position) "
    "WHERE m.position <= $lim"
)
_STATE = "SELECT docs, length FROM tracking WHERE name = 'main'"


def step() -> int:
    return max(SPAN_SIZE - SPAN_OVERLAP, 1)


def windows_of(position: int) -> list[int]:
    """The windows holding a position (two where windows overlap), first one first."""
    first = position // step()
    out = []
    w = first
    while w >= 0 and w * step() + SPAN_SIZE > position:
        out.append(w)
        w -= 1
    return out[::-1]


def span_channel(
    con: duckdb.DuckDBPyConnection, query: str, hits: list[tuple[Any, ...]], limit: int
) -> tuple[list[Found], list[int]]:
    """The messages of the best windows, each once, at its first window's rank: (found, ranks)."""
    q = sorted(set(terms(query)))
    anchors = [h[0] for h in hits if h[1] == "message"][:SPAN_FROM]
    if SPAN_K <= 0 or not anchors or not q:
        return [], []
    owner: dict[int, int] = {}  # each candidate window and its best anchor
    for p in anchors:
        for w in windows_of(p):
            owner.setdefault(w, p)
    wanted = sorted({w * step() + d for w in owner for d in range(SPAN_SIZE)})
    # The query terms' postings at the windows' positions (each carries its document's
    # length), read per term from the sorted index as the lexical channel reads them, and the
    # terms' document frequencies, counted the same way.
    union, named = _per_term(AT_CANDIDATES, q)
    tf: dict[int, dict[str, int]] = {}
    lengths: dict[int, int] = {}
    for term, position, n, length in con.execute(union, named | {"cand": wanted}).fetchall():
        if position <= limit:
            tf.setdefault(position, {})[term] = n
            lengths[position] = length
    df = _counted(con, q, limit)
    ((docs, total),) = con.execute(_STATE).fetchall() or [(0, 0)]
    if not docs or not tf:
        return [], []
    mean = total / docs
    idf = {t: math.log(1 + (docs - n + 0.5) / (n + 0.5)) for t, n in df.items()}
    scored: list[tuple[float, int]] = []
    for w in owner:
        counts: dict[str, int] = {}
        size = 0.0
        for p in range(w * step(), w * step() + SPAN_SIZE):
            # A position without the query's terms counts as an average message.
            size += lengths.get(p, mean)
            for term, n in tf.get(p, {}).items():
                counts[term] = counts.get(term, 0) + n
        score = sum(
            idf.get(t, 0.0) * n * (K1 + 1) / (n + K1 * (1 - B + B * size / (SPAN_SIZE * mean)))
            for t, n in counts.items()
        )
        scored.append((score, w))
    scored.sort(key=lambda s: (-s[0], s[1]))
    best = [w for _, w in scored[:SPAN_K]]
    inside = sorted({w * step() + d for w in best for d in range(SPAN_SIZE)})
    members = {r[0]: r for r in con.execute(_TEXTS, {"p": inside, "lim": limit}).fetchall()}
    out: list[Found] = []
    ranks: list[int] = []
    seen: set[int] = set()
    for n, w in enumerate(best, 1):
        held = [p for p in range(w * step(), w * step() + SPAN_SIZE) if p in members]
        # The messages of the conversation of the window's best-scored message.
        conv = max(held, key=lambda p: sum(tf.get(p, {}).values()), default=None)
        for p in held:
            if p not in seen and members[p][1] == members[conv][1]:
                seen.add(p)
                _, _, sp, t, tx, sid = members[p]
                out.append(said(p, sp, t, tx, sid, f"in span #{n}"))
                ranks.append(n + SPAN_PENALTY)
    return out, ranks
