"""LoCoMo retrieval benchmark: evidence recall of `mind recall` against a plain BM25 baseline.

For every question in categories 1-4, recall runs against a mind that imported only that
question's conversation; at budgets of 500, 1,000 and 2,000 tokens we report evidence recall
(fraction of gold dia_ids among the items that fit), recall@10 (gold among the first ten
evidence items) and mean tokens, per category and overall, plus retrieval latency. The baseline
is rank_bm25's BM25Okapi over the same turns, rendered and packed the same way.

With `--vectors both` every question is also recalled with the vector channel (the offline
all-MiniLM-L6-v2 through LiteLLM, adapters/embeddings.py): each conversation's messages are
embedded once before its questions (timed apart), the question at every recall (in the
latency). `--vectors on` reports only that arm.

Run: .venv/bin/python -m bench.locomo [--data ../shared/data/locomo/locomo10.json] [--samples N]
     [--vectors off|on|both]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rank_bm25 import BM25Okapi

from bench.common import new_mind, percentiles, report
from mindledger.adapters.embeddings import LiteLLMEmbedder
from mindledger.adapters.importers import import_locomo, locomo_messages, locomo_samples
from mindledger.compose import Home, read_model
from mindledger.domain.context_port import ContextItem
from mindledger.domain.settings import DEFAULT_EMBEDDING_MODEL
from mindledger.projections.retrieval.context import fit
from mindledger.projections.retrieval.item_text import day_of, message_text
from mindledger.projections.retrieval.recall import FIXED_CHANNELS, gather, rank

BUDGETS = (500, 1000, 2000)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"
NOW = datetime(2024, 1, 1, tzinfo=UTC)  # after every LoCoMo session


def gold_ids(evidence: list[str]) -> set[str]:
    """Normalise the file's evidence strings ('D8:6; D9:17', 'D:11:26', 'D30:05')."""
    out = set()
    for raw in evidence:
        for part in re.split(r"[;,\s]+", raw):
            m = re.match(r"D:?(\d+):0*(\d+)$", part.strip())
            if m:
                out.add(f"D{m.group(1)}:{m.group(2)}")
    return out


def scores(items: list[ContextItem], gold: set[str]) -> dict[str, float]:
    evidence = [i for i in items if i.channel not in FIXED_CHANNELS]
    found = {i.source_id for i in items}
    top10 = {i.source_id for i in evidence[:10]}
    return {"recall": len(gold & found) / len(gold), "at10": len(gold & top10) / len(gold)}


def baseline(sample: dict[str, Any]) -> tuple[BM25Okapi, list[ContextItem], int]:
    turns = list(locomo_messages(sample))
    items = [
        ContextItem(
            i,
            "message",
            "bm25",
            "",
            0.0,
            0,
            f"#{i} {message_text(t.speaker, t.text, observed=True)}",
            t.source_id,
            day=day_of(t.said_at),
        )
        for i, t in enumerate(turns)
    ]
    tokenized = [re.findall(r"\w+", f"{t.speaker} {t.text}".lower()) for t in turns]
    full = fit(items, 10**9).tokens  # the whole conversation, rendered as recall renders
    return BM25Okapi(tokenized), items, full


def mean(
    store: dict[tuple[int, int], list[dict[str, float]]], budget: int, category: int, key: str
) -> float:
    """The mean of one score over a budget and a category (0 = all)."""
    rows = [r for (c, b), rs in store.items() if b == budget and category in (0, c) for r in rs]
    return round(statistics.mean(r[key] for r in rows), 3)


Store = dict[tuple[int, int], list[dict[str, float]]]


def warm_vectors(con: Any, embedder: LiteLLMEmbedder) -> float:
    """Embed the conversation's messages once (what recall's vector channel reads), seconds."""
    start = time.perf_counter()
    texts = [t for (t,) in con.execute("SELECT text FROM messages").fetchall()]
    embedder.matrix(texts)
    return time.perf_counter() - start


def run(data: Path, limit: int | None, vectors: str = "off") -> None:
    samples = locomo_samples(data)[:limit]
    arms = {"off": ["off"], "on": ["on"], "both": ["off", "on"]}[vectors]
    by_arm: dict[str, Store] = {arm: defaultdict(list) for arm in arms}
    base: Store = defaultdict(list)
    tokens: dict[str, dict[int, list[int]]] = {arm: defaultdict(list) for arm in arms}
    latencies: dict[str, list[float]] = {arm: [] for arm in arms}
    full_context, warm = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for sample in samples:
            folder = Path(tmp) / sample["sample_id"]
            app = new_mind(folder)
            import_locomo(app, data, sample["sample_id"])
            bm25, turns, full = baseline(sample)
            full_context.append(full)
            embedder = LiteLLMEmbedder(
                DEFAULT_EMBEDDING_MODEL, folder / "embeddings.sqlite", app.text_keys
            )
            with read_model(Home(folder)) as con:
                if "on" in arms:
                    warm.append(warm_vectors(con, embedder))
                for qa in sample["qa"]:
                    gold = gold_ids(qa.get("evidence", []))
                    if qa["category"] == 5 or not gold:
                        continue
                    for arm in arms:
                        start = time.perf_counter()
                        embed = embedder if arm == "on" else None
                        ranked = rank(gather(con, qa["question"], NOW, embed=embed))
                        fitted = {b: fit(ranked, b) for b in BUDGETS}
                        latencies[arm].append(time.perf_counter() - start)
                        for b in BUDGETS:
                            by_arm[arm][(qa["category"], b)].append(scores(fitted[b].items, gold))
                            tokens[arm][b].append(fitted[b].tokens)
                    order = bm25.get_scores(re.findall(r"\w+", qa["question"].lower()))
                    by_score = [
                        turns[i] for i in sorted(range(len(turns)), key=lambda i: (-order[i], i))
                    ]
                    for b in BUDGETS:
                        base[(qa["category"], b)].append(scores(fit(by_score, b).items, gold))
    for arm in arms:
        label = "" if arm == "off" else "_vectors_on"
        print_arm(by_arm[arm], base, label)
        summary: dict[str, Any] = {
            "vectors": arm,
            "mean_tokens": {b: round(statistics.mean(tokens[arm][b])) for b in BUDGETS},
            "full_context_tokens_mean": round(statistics.mean(full_context)),
            **{"retrieval_" + k: v for k, v in percentiles(latencies[arm]).items()},
        }
        if arm == "on":
            summary["embed_conversation_seconds_mean"] = round(statistics.mean(warm), 2)
        report("locomo_summary", summary)
    if len(arms) == 2:
        for b in BUDGETS:
            report(
                "locomo_vectors",
                {
                    "budget": b,
                    "evidence_recall_off": mean(by_arm["off"], b, 0, "recall"),
                    "evidence_recall_on": mean(by_arm["on"], b, 0, "recall"),
                    "recall_at_10_off": mean(by_arm["off"], b, 0, "at10"),
                    "recall_at_10_on": mean(by_arm["on"], b, 0, "at10"),
                },
            )


def print_arm(ours: Store, base: Store, label: str) -> None:
    table = []
    for b in BUDGETS:
        for cat in (1, 2, 3, 4, 0):
            n = sum(len(rs) for (c, bb), rs in ours.items() if bb == b and cat in (0, c))
            row = {
                "budget": b,
                "category": cat or "all",
                "questions": n,
                "evidence_recall": mean(ours, b, cat, "recall"),
                "bm25_recall": mean(base, b, cat, "recall"),
                "recall_at_10": mean(ours, b, cat, "at10"),
                "bm25_recall_at_10": mean(base, b, cat, "at10"),
            }
            row["ratio_to_bm25"] = round(row["evidence_recall"] / max(row["bm25_recall"], 1e-9), 2)
            table.append(row)
            report("locomo" + label, row)
    print(f"\n{label or 'vector channel off'}:")
    print_table(table)


def print_table(rows: list[dict[str, Any]]) -> None:
    print("\nbudget  category  n     recall  bm25   ratio  r@10   bm25@10")
    for r in rows:
        print(
            f"{r['budget']:<7} {r['category']!s:<9} {r['questions']:<5} "
            f"{r['evidence_recall']:<7} {r['bm25_recall']:<6} {r['ratio_to_bm25']:<6} "
            f"{r['recall_at_10']:<6} {r['bm25_recall_at_10']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--vectors", choices=("off", "on", "both"), default="off")
    args = parser.parse_args()
    run(args.data, args.samples, args.vectors)


if __name__ == "__main__":
    main()
