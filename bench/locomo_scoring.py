"""Scoring for bench/locomo.py: gold evidence, per-question scores, Wilson intervals, and the
leave-one-conversation-out (LOO) choice of tuned settings.

Evidence recall is the fraction of a question's gold turns among the items that fit the budget;
recall@10 the fraction among the first ten evidence items. Session recall R@k (what peers quote)
ranks sessions by the first of their turns in our evidence order and counts the gold sessions
among the first k. The 95% interval of a mean score over n questions is Wilson's score interval
for a proportion p = mean over n trials (exact for 0/1 scores, a close approximation for the
fractional scores of questions with several gold turns).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mindledger.domain.context_port import ContextItem
from mindledger.projections.retrieval.recall import FIXED_CHANNELS

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
HEADLINE = (1, 2, 3, 4)  # the figure the README has always quoted: category 5 aside
Z95 = 1.959964


def gold_ids(evidence: list[str]) -> set[str]:
    """Normalise the file's evidence strings ('D8:6; D9:17', 'D:11:26', 'D30:05')."""
    out = set()
    for raw in evidence:
        for part in re.split(r"[;,\s]+", raw):
            m = re.match(r"D:?(\d+):0*(\d+)$", part.strip())
            if m:
                out.add(f"D{m.group(1)}:{m.group(2)}")
    return out


def session_of(dia_id: str | None) -> str | None:
    """'D8:6' -> 'D8'."""
    return dia_id.split(":", 1)[0] if dia_id and ":" in dia_id else None


def sessions_in_order(items: Iterable[ContextItem]) -> list[str]:
    """The sessions of the evidence items, each at its first turn's place."""
    seen: dict[str, None] = {}
    for i in items:
        if i.channel not in FIXED_CHANNELS and (s := session_of(i.source_id)) is not None:
            seen.setdefault(s, None)
    return list(seen)


def session_recall(ranked: Sequence[ContextItem], gold: set[str]) -> dict[str, float]:
    """Session-level R@5 and R@10 over the whole ranking (no budget)."""
    wanted = {s for g in gold if (s := session_of(g))}
    order = sessions_in_order(ranked)
    return {f"s@{k}": len(wanted & set(order[:k])) / len(wanted) for k in (5, 10)}


def scores(items: Sequence[ContextItem], gold: set[str]) -> dict[str, float]:
    """Evidence recall and recall@10 of the packed items."""
    evidence = [i for i in items if i.channel not in FIXED_CHANNELS]
    found = {i.source_id for i in items}
    top10 = {i.source_id for i in evidence[:10]}
    return {"recall": len(gold & found) / len(gold), "at10": len(gold & top10) / len(gold)}


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion p over n trials."""
    if n == 0:
        return (0.0, 0.0)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Scored:
    """One question's scores under one arm and setting: by budget, plus session recall."""

    sample: str
    category: int
    by_budget: dict[int, dict[str, float]] = field(default_factory=dict)
    tokens: dict[int, int] = field(default_factory=dict)
    sessions: dict[str, float] = field(default_factory=dict)


def in_categories(rows: Iterable[Scored], categories: Iterable[int]) -> list[Scored]:
    wanted = set(categories)
    return [r for r in rows if r.category in wanted]


def mean_of(rows: Sequence[Scored], budget: int, key: str) -> float:
    """The mean of a budget's score (or of a session score when `budget` is 0)."""
    if not rows:
        return 0.0
    if budget == 0:
        return statistics.mean(r.sessions[key] for r in rows)
    return statistics.mean(r.by_budget[budget][key] for r in rows)


def summary_row(
    ours: Sequence[Scored], base: Sequence[Scored], budget: int, label: str
) -> dict[str, Any]:
    """One table row: our recall with its interval, BM25's, recall@10, session R@5/R@10, tokens."""
    p, n = mean_of(ours, budget, "recall"), len(ours)
    low, high = wilson(p, n)
    bm25 = mean_of(base, budget, "recall")
    return {
        "budget": budget,
        "category": label,
        "questions": n,
        "evidence_recall": round(p, 3),
        "ci95": [round(low, 3), round(high, 3)],
        "bm25_recall": round(bm25, 3),
        "ratio_to_bm25": round(p / max(bm25, 1e-9), 2),
        "recall_at_10": round(mean_of(ours, budget, "at10"), 3),
        "bm25_recall_at_10": round(mean_of(base, budget, "at10"), 3),
        "session_r5": round(mean_of(ours, 0, "s@5"), 3),
        "session_r10": round(mean_of(ours, 0, "s@10"), 3),
        "bm25_session_r5": round(mean_of(base, 0, "s@5"), 3),
        "bm25_session_r10": round(mean_of(base, 0, "s@10"), 3),
        "tokens_mean": round(statistics.mean(r.tokens[budget] for r in ours)) if ours else 0,
    }


def groups() -> list[tuple[str, tuple[int, ...]]]:
    """Table rows: each category, then 1-4 (the headline), then all five."""
    return [(str(c), (c,)) for c in CATEGORIES] + [("1-4", HEADLINE), ("all", (1, 2, 3, 4, 5))]


def objective(rows: Sequence[Scored], budgets: Sequence[int]) -> float:
    """What a LOO fold maximises: mean evidence recall over the budgets, categories 1-4."""
    head = in_categories(rows, HEADLINE)
    return statistics.mean(mean_of(head, b, "recall") for b in budgets) if head else 0.0


def leave_one_out(
    by_setting: Sequence[Sequence[Scored]], budgets: Sequence[int]
) -> tuple[list[Scored], dict[str, int]]:
    """For each conversation, the setting best on the other conversations, and that setting's
    scores of the held-out one: (the held-out scores of every fold, each fold's setting index).
    Ties go to the lower index (list the default setting first)."""
    samples = sorted({r.sample for rows in by_setting for r in rows})
    held: list[Scored] = []
    chosen: dict[str, int] = {}
    for out in samples:
        fitted = [objective([r for r in rows if r.sample != out], budgets) for rows in by_setting]
        best = max(range(len(fitted)), key=lambda i: (fitted[i], -i))
        chosen[out] = best
        held.extend(r for r in by_setting[best] if r.sample == out)
    return held, chosen
