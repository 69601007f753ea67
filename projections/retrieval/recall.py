"""Retrieval: candidates from several channels, fused by reciprocal rank, packed into a token
budget. Deterministic: the same read model and query give the same selection (ties by position).

Channels: lexical (BM25 over messages, commitments, concepts and threads), neighbours (the turns
around the best lexical hits), spans (the messages of the windows of consecutive messages whose
lexical hits score best), concepts (named or aliased in the query, and their relations),
commitments (open), threads (live), recency (the latest messages), time (messages inside a time
window the query names), knowledge (the item asking the query's question, and with an embedder
the nearest questions), and vector similarity when an embedder is given (off by default).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.context_port import AssembledContext, ContextItem
from mindledger.domain.prompt_text import observed_speaker
from mindledger.projections.engine.kept_reads import KeptReads, kept_rows
from mindledger.projections.queries.thread_queries import last_refusals
from mindledger.projections.retrieval.channels import (
    Picks,
    SharedRead,
    concept_channel,
    lexical_channel,
    messages,
    open_commitments,
    rows,
    vector_channel,
)
from mindledger.projections.retrieval.concurrent_reads import run_reads
from mindledger.projections.retrieval.day_prior import weigh_days
from mindledger.projections.retrieval.exact import WHOLE, exact_lead
from mindledger.projections.retrieval.item_text import Found, commitment_text, identity_text, said
from mindledger.projections.retrieval.knowledge_channel import knowledge_channel
from mindledger.projections.retrieval.names import keys_in
from mindledger.projections.retrieval.newest import newest
from mindledger.projections.retrieval.spans import span_channel
from mindledger.projections.retrieval.thread_context import (
    ThreadView,
    candidates,
    live_threads,
    notices,
)
from mindledger.projections.retrieval.time_expressions import windows

RRF_K = 60
# A candidate's best channel counts fully, its other channels at 0.15: plain reciprocal rank
# fusion (1.0) let clusters of neighbours crowd out isolated strong hits (bench/locomo.py:
# evidence recall at 2,000 / 1,000 tokens 0.8506 / 0.7975 at 0.25, 0.8531 / 0.8010 at 0.2,
# 0.8532 / 0.8051 at 0.15, 0.8526 / 0.8024 at 0.1, 0.8499 / 0.8032 at 0.05).
SECOND_OPINION = 0.15
# Every channel's ranks count the same but the per-message vector channel's, at 0.7: with the
# windows and speaker vectors beside it, every leave-one-conversation-out fold on LoCoMo chose
# it (0.751 / 0.832 / 0.886 against 0.742 / 0.829 / 0.881 at 500 / 1,000 / 2,000 tokens);
# down-weighting neighbours or recency measured worse (docs/benchmarks/locomo-windows.md). The
# windows' at 0.8 with the day prior (`day_prior`): a window lifts six messages at its rank,
# and took half of a 2,000-token budget for 1.2% of its gold (docs/benchmarks/locomo-day-prior.md).
WEIGHTS: dict[str, float] = {"vector": 0.7, "windows": 0.8}
# When a query names exactly one participant of an imported conversation ("What did Caroline
# research?"), every other participant's messages count at OTHER_SPEAKER of their fused score:
# on LoCoMo 96% of such questions' evidence is the named person's own words, and the other
# side's replies around it took the budget (leave-one-conversation-out,
# docs/benchmarks/locomo-speaker-prior.md).
OTHER_SPEAKER = 0.85
NEIGHBOUR_PENALTY = 2  # a neighbour ranks just below the hit it sits next to
RECENT = 6
# The latest messages but the turn's own (`newest`: from where a session's last answer began).
RECENT_READ = (
    "SELECT position, speaker, time, text, source_id FROM messages "
    "WHERE turn_id IS DISTINCT FROM ? AND position <= ?"
)
TIME_K = 20
# Fixed items lead the context; evidence follows in fused order.
FIXED_CHANNELS = ("identity", "commitments", "threads")
NO_LIMIT = 2**62
NO_MEANING: tuple[Any, ...] = ([], ([], []), ([], []))  # the meaning channels without an embedder


@dataclass
class Candidate:
    """A document found by one or more channels."""

    id: int
    kind: str
    text: str
    source_id: str | None = None
    ranks: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    stream: str | None = None
    day: str | None = None  # a message's

    def fused(self) -> float:
        parts = sorted(
            (WEIGHTS.get(c, 1.0) / (RRF_K + r) for c, r in self.ranks.items()), reverse=True
        )
        return parts[0] + SECOND_OPINION * sum(parts[1:])

    def channel(self) -> str:
        return min(self.ranks, key=lambda c: (self.ranks[c], c))


class Pool:
    """Candidates by ledger position, each remembering its rank in every channel."""

    def __init__(self) -> None:
        self.items: dict[int, Candidate] = {}
        self.threads = ThreadView()  # by tension, for the threads block
        self.refusals: list[dict[str, str]] = []  # the last turn's refused lines
        self.query = ""  # what the channels were asked, for exactness
        self.named: list[str] = []  # the participants the query names (`OTHER_SPEAKER`)

    def add(
        self,
        channel: str,
        ranked: list[Found],
        ranks: list[int] | None = None,
    ) -> None:
        """Add a channel's results, best first (`projections.retrieval.item_text.Found`); `ranks`
        overrides the plain 1, 2, 3... (neighbours take the rank of the hit they sit next to)."""
        for i, (id_, kind, text, source_id, reason, *day) in enumerate(ranked):
            rank = ranks[i] if ranks is not None else i + 1
            c = self.items.setdefault(
                id_, Candidate(id_, kind, text, source_id, day=day[0] if day else None)
            )
            if channel not in c.ranks:
                c.ranks[channel], c.reasons[channel] = rank, reason


def gather(
    con: duckdb.DuckDBPyConnection,
    query: str,
    now: datetime,
    as_of: int | None = None,
    exclude_turn: str | None = None,
    embed: Callable[[list[str]], list[list[float]]] | None = None,
    refusals: bool = False,
    spans: bool = False,
    kept: KeptReads | None = None,
) -> Pool:
    """Run every channel and pool the results (`refusals`: also read the last turn's refused
    lines, for the threads block; `spans`: run the spans channel; `kept`: the reads a session's
    projector keeps, `projections.engine.kept_reads`). The channels' reads run on two
    connections at once (`projections.retrieval.concurrent_reads`); they are pooled in a fixed
    order."""
    limit = NO_LIMIT if as_of is None else as_of
    if not any(ch.isalnum() for ch in query):
        # No words, no meaning: the nearest vectors to an empty text (a zero-width space is one
        # to the model), to punctuation or to emoji (unknown tokens to it) are arbitrary.
        embed = None
    keys = set(keys_in(query))  # the names the query could hold
    periods = windows(query, now)  # the time windows the query names
    inside = "time >= ? AND time < ? AND position <= ?"
    # With stored vectors, the vector channel's messages are read in the lexical chain's read.
    share = SharedRead() if getattr(embed, "latest", None) is not None else None
    reads: list[Callable[[duckdb.DuckDBPyConnection], Any]] = [
        # The longest first, so that the two connections finish together (the vector channel
        # embeds the query meanwhile: numpy and DuckDB both let go of the GIL).
        lambda c: meaning(c, query, limit, embed, share),
        lambda c: with_spans(
            c, query, lexical_channel(c, query, limit, keys, share, kept), limit, spans
        ),
        lambda c: live_threads(c, now, limit, kept),
        lambda c: open_commitments(c, limit, kept),
        lambda c: concept_channel(c, keys, limit, kept),
        lambda c: newest(c, kept, "recent", RECENT_READ, [exclude_turn, limit], RECENT),
        lambda c: [messages(c, inside, [s, e, limit], "position", 500) for s, e, _ in periods],
        lambda c: kept_rows(c, kept, "SELECT name FROM identity", ("identity",)),
        lambda c: last_refusals(c, exclude_turn, kept) if refusals else [],
        # Without an embedder, one key lookup: among the reads, not after them alone. With
        # one, after them (the vector channel may be embedding on the other thread).
        lambda c: knowledge_channel(c, query, limit, None, kept) if embed is None else [],
    ]
    (
        meant,
        (hits, texts, found, spoken, named, (in_spans, span_ranks)),
        threads,
        (open_, served),
        (concept_items, bound),
        recent,
        in_windows,
        names,
        refused,
        known,
    ) = run_reads(con, reads)
    if isinstance(meant, Picks):
        meant = meant.found(share.rows if share is not None else {})
    (similar, (spoken_alike, alike_ranks), (windowed, window_ranks)) = meant
    pool = Pool()
    pool.query, pool.named = query, named
    for (name,) in names:
        pool.add(
            "identity",
            [(1, "identity", identity_text(name), None, "who the mind is")],
        )
    # The stream of each thread and commitment found, where a channel's query knew it.
    streams: dict[int, str] = {}
    streams.update((pos, stream) for pos, _, _, stream in open_)
    pool.add(
        "commitments",
        [
            (pos, "commitment", commitment_text(cid, text), cid, "open commitment")
            for pos, cid, text, _ in open_
        ],
    )
    # After the (at most 10) open commitments.
    pool.add("commitments", served, ranks=[11 + i for i in range(len(served))])
    pool.threads, pool.refusals = threads, refused
    pool.add("threads", candidates(pool.threads))
    streams.update((r["opened_position"], r["stream_id"]) for r in pool.threads.top)
    pool.add("concepts", concept_items)
    pool.add("bindings", bound)
    pool.add(
        "lexical",
        [
            (
                pos,
                kind,
                texts[pos][0],
                texts[pos][1],
                "shares " + ", ".join(matched[:6]),
                texts[pos][2],
            )
            for pos, kind, _, _, matched in hits
            if pos in texts
        ],
    )
    streams.update((h[0], h[2]) for h in hits if h[1] in ("thread", "commitment"))
    lexical_rank = {h[0]: n for n, h in enumerate(hits, 1)}
    pool.add(
        "neighbours",
        [f for f, _ in found],
        [lexical_rank[hit] + NEIGHBOUR_PENALTY for _, hit in found],
    )
    pool.add("spans", in_spans, span_ranks)
    for (_, _, words), inside_rows in zip(periods, in_windows, strict=True):
        # Inside the window, what the words also found comes first, then the rest in order.
        inside_rows.sort(key=lambda r: (lexical_rank.get(r[0], NO_LIMIT), r[0]))
        pool.add(
            "time",
            [
                said(p, sp, t, tx, sid, f"said {words}")
                for p, sp, t, tx, sid in inside_rows[:TIME_K]
            ],
        )
    pool.add(
        "recency",
        [said(p, sp, t, tx, sid, "recent conversation") for p, sp, t, tx, sid in recent],
    )
    pool.add("vector", similar)
    pool.add("windows", windowed, window_ranks)
    pool.add("speaker_vector", spoken_alike, alike_ranks)
    pool.add(
        "knowledge", known if embed is None else knowledge_channel(con, query, limit, embed, kept)
    )
    pool.add("speaker", spoken)
    owned = [c.id for c in pool.items.values() if c.kind in ("thread", "commitment")]
    unknown = [i for i in owned if i not in streams]
    if unknown:  # threads served by commitments, bound items
        streams.update(
            rows(
                con,
                "SELECT opened_position, stream_id FROM threads WHERE opened_position IN "
                "(SELECT unnest($p)) UNION ALL SELECT opened_position, stream_id FROM commitments "
                "WHERE opened_position IN (SELECT unnest($p))",
                {"p": unknown},
            )
        )
    for i in owned:
        pool.items[i].stream = streams.get(i)
    return pool


def meaning(
    con: duckdb.DuckDBPyConnection,
    query: str,
    limit: int,
    embed: Callable[[list[str]], list[list[float]]] | None,
    share: SharedRead | None,
) -> Any:
    """The meaning channels' read: nothing without an embedder, their choices (`Picks`, their
    messages read by the lexical chain) when `share`, else their results."""
    if embed is None:
        return NO_MEANING
    if share is not None:
        return share.picked(con, query, limit, embed)
    return vector_channel(con, query, limit, embed)


EXACT_REASONS = {WHOLE: "exact: the query is its text", 1: "exact: it holds the query's words"}


def with_spans(
    con: duckdb.DuckDBPyConnection, query: str, lexical: tuple[Any, ...], limit: int, on: bool
) -> tuple[Any, ...]:
    """The lexical channel's reads and, from its hits, the spans channel's
    (`projections.retrieval.spans`): one chain, the spans need the hits."""
    return (*lexical, span_channel(con, query, lexical[0], limit) if on else ([], []))


def rank(pool: Pool, lead_with_threads: bool = False) -> list[ContextItem]:
    """An item holding the query's words verbatim first (`projections.retrieval.exact`), then
    fixed items (identity, commitments, threads; threads first in an autonomy cycle), then
    evidence by fused score, weighed by the speaker prior (`OTHER_SPEAKER`) and the day prior
    (`projections.retrieval.day_prior`)."""
    lead = exact_lead(pool.query, pool.items.values())
    # Each candidate's score and best channel once (a few hundred candidates, each asked for
    # them by the sorts and the item: ~1 ms of a recall).
    score = {c.id: c.fused() for c in pool.items.values()}
    for i in others_said(pool):
        score[i] *= OTHER_SPEAKER
    best = {c.id: c.channel() for c in pool.items.values()}

    def item(c: Candidate) -> ContextItem:
        reason = "; ".join(f"{ch} #{c.ranks[ch]}: {c.reasons[ch]}" for ch in sorted(c.ranks))
        if c.id in lead:
            reason = f"{EXACT_REASONS[lead[c.id]]}; {reason}"
        return ContextItem(
            c.id,
            c.kind,
            best[c.id],
            reason,
            round(score[c.id], 6),
            0,
            f"#{c.id} {c.text}",
            c.source_id,
            stream=c.stream,
            day=c.day,
        )

    leading = sorted((pool.items[i] for i in lead), key=lambda c: (-lead[c.id], -score[c.id], c.id))
    rest = [c for c in pool.items.values() if c.id not in lead]
    fixed = [c for c in rest if best[c.id] in FIXED_CHANNELS]
    evidence = [c for c in rest if best[c.id] not in FIXED_CHANNELS]
    weigh_days(((c.id, c.day) for c in evidence), score)
    order = ("threads", "identity", "commitments") if lead_with_threads else FIXED_CHANNELS
    fixed.sort(key=lambda c: (order.index(best[c.id]), c.ranks[best[c.id]]))
    evidence.sort(key=lambda c: (-score[c.id], c.id))
    return [item(c) for c in leading + fixed + evidence]


def others_said(pool: Pool) -> list[int]:
    """The imported messages of the pool said by someone else than the one participant the
    query names (none when it names none or several)."""
    if len(pool.named) != 1 or OTHER_SPEAKER == 1.0:
        return []
    own = f"[{observed_speaker(pool.named[0])}] "
    return [
        c.id
        for c in pool.items.values()
        if c.kind == "message" and c.source_id is not None and not c.text.startswith(own)
    ]


def recall(
    con: duckdb.DuckDBPyConnection,
    query: str,
    budget: int,
    now: datetime,
    as_of: int | None = None,
    exclude_turn: str | None = None,
    embed: Callable[[list[str]], list[list[float]]] | None = None,
    for_turn: bool = False,
    lead_with_threads: bool = False,
    spans: bool = False,
    kept: KeptReads | None = None,
) -> AssembledContext:
    """Retrieve, fuse and pack into `budget` tokens. A turn's context (`for_turn`) also carries
    the threads block's notices: the rule, the triage demand and the last turn's refusals.
    `kept`: the reads a session's projector keeps (`projections.engine.kept_reads`)."""
    from mindledger.projections.retrieval.excerpts import pack

    pool = gather(
        con, query, now, as_of, exclude_turn, embed, refusals=for_turn, spans=spans, kept=kept
    )
    items = rank(pool, lead_with_threads)
    if for_turn:
        extra = notices(pool.threads, pool.refusals)
        # Right after the threads (or after the fixed items when no thread is live).
        fixed = [n for n, i in enumerate(items) if i.channel in FIXED_CHANNELS]
        threads = [n for n, i in enumerate(items) if i.channel == "threads"]
        cut = (threads or fixed or [-1])[-1] + 1
        items = items[:cut] + extra + items[cut:]
    return pack(con, items, query, budget)
