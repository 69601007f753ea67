"""Long-message benchmark: evidence recall of recall against a plain BM25 when assistant replies
run to ~1,000 tokens and most evidence sits in short user messages (`bench.longmsg_data`).

Every conversation is imported into a mind of its own (`import chat`); each question is recalled
as `mind recall` does (`projections.retrieval.recall.recall`) at 2,000, 4,000 and 8,000 tokens.
The baseline is rank_bm25's BM25Okapi over the same messages, whole, rendered as recall renders
them and packed by the same `fit` to the same budget. Evidence counts as found only when the
fact's value is in the context inside its own message's item (`strict`); `message` counts the
message's id alone, as a message-level benchmark would.

Run: .venv/bin/python -m bench.longmsg [--conversations 20] [--seed 7] [--no-neighbours]
     [--whole] [--whole-too] [--value-power P]
`--whole` recalls with every message whole (as before excerpts); `--whole-too` does both,
interleaved question by question, and reports the two latencies side by side.
"""

from __future__ import annotations

import argparse
import json
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
from bench.longmsg_data import Conversation, Question, conversations
from mindledger.adapters.importers import import_chat
from mindledger.compose import Home, read_model
from mindledger.domain.context_port import AssembledContext, ContextItem
from mindledger.projections.retrieval import channels, excerpts
from mindledger.projections.retrieval.context import fit
from mindledger.projections.retrieval.item_text import day_of, message_text
from mindledger.projections.retrieval.recall import recall

BUDGETS = (2000, 4000, 8000)
NOW = datetime(2025, 6, 1, tzinfo=UTC)
WORD = re.compile(r"\w+")


def found(context: AssembledContext, q: Question, ids: list[int]) -> dict[str, float]:
    """The share of a question's evidence in a context: strict (the fact's value inside its own
    message's item) and by message id alone."""
    by_id = {i.id: i.text for i in context.items}
    strict = sum(ids[m] in by_id and needle in by_id[ids[m]] for m, needle in q.evidence)
    message = sum(ids[m] in by_id for m, _ in q.evidence)
    return {"strict": strict / len(q.evidence), "message": message / len(q.evidence)}


def baseline_items(conv: Conversation, ids: list[int]) -> list[ContextItem]:
    """The messages whole, rendered as recall renders imported messages."""
    return [
        ContextItem(
            ids[n],
            "message",
            "bm25",
            "",
            0.0,
            0,
            f"#{ids[n]} {message_text(role, text, observed=True)}",
            day=day_of(at),
        )
        for n, (role, text, at) in enumerate(conv.messages)
    ]


def load(conv: Conversation, folder: Path) -> list[int]:
    """Import the conversation into a new mind; the ledger position of each message."""
    app = new_mind(folder)
    path = folder.parent / f"{conv.name}.jsonl"
    lines = [
        json.dumps({"role": r, "content": t, "time": at.isoformat()}) for r, t, at in conv.messages
    ]
    path.write_text("\n".join(lines) + "\n")
    import_chat(app, path)
    with read_model(Home(folder)) as con:
        ids = [
            p for (p,) in con.execute("SELECT position FROM messages ORDER BY position").fetchall()
        ]
    assert len(ids) == len(conv.messages)
    return ids


Store = dict[tuple[str, int], list[dict[str, float]]]


def run(count: int, seed: int, whole_too: bool = False) -> dict[str, Any]:
    ours: Store = defaultdict(list)
    base: Store = defaultdict(list)
    whole: Store = defaultdict(list)  # recall with every message whole (before excerpts)
    latency: list[float] = []
    whole_latency: list[float] = []
    tokens: dict[int, list[int]] = defaultdict(list)
    share: dict[int, list[float]] = defaultdict(list)  # of our tokens that went to neighbours
    with tempfile.TemporaryDirectory() as tmp:
        for conv in conversations(seed, count):
            folder = Path(tmp) / conv.name
            ids = load(conv, folder)
            items = baseline_items(conv, ids)
            bm25 = BM25Okapi([WORD.findall(f"{r} {t}".lower()) for r, t, _ in conv.messages])
            with read_model(Home(folder)) as con:
                for q in conv.questions:
                    for b in BUDGETS:
                        start = time.perf_counter()
                        context = recall(con, q.text, b, NOW)
                        if b == BUDGETS[0]:
                            latency.append(time.perf_counter() - start)
                        tokens[b].append(context.tokens)
                        near = sum(i.tokens for i in context.items if i.channel == "neighbours")
                        share[b].append(near / max(context.tokens, 1))
                        for key in (q.kind, "all"):
                            ours[(key, b)].append(found(context, q, ids))
                    order = bm25.get_scores(WORD.findall(q.text.lower()))
                    ranked = [items[i] for i in sorted(range(len(items)), key=lambda i: -order[i])]
                    for b in BUDGETS:
                        packed = fit(ranked, b)
                        for key in (q.kind, "all"):
                            base[(key, b)].append(found(packed, q, ids))
                    if whole_too:  # interleaved with ours, so the two latencies share the load
                        kept, excerpts.LONG_CHARS = excerpts.LONG_CHARS, 2**62
                        for b in BUDGETS:
                            start = time.perf_counter()
                            context = recall(con, q.text, b, NOW)
                            if b == BUDGETS[0]:
                                whole_latency.append(time.perf_counter() - start)
                            for key in (q.kind, "all"):
                                whole[(key, b)].append(found(context, q, ids))
                        excerpts.LONG_CHARS = kept
    rows = []
    for b in BUDGETS:
        for kind in ("all", "single", "update", "pair"):
            got, ref = ours[(kind, b)], base[(kind, b)]
            row: dict[str, Any] = {
                "budget": b,
                "kind": kind,
                "questions": len(got),
                "recall": round(statistics.mean(r["strict"] for r in got), 3),
                "bm25": round(statistics.mean(r["strict"] for r in ref), 3),
                "recall_message": round(statistics.mean(r["message"] for r in got), 3),
                "bm25_message": round(statistics.mean(r["message"] for r in ref), 3),
            }
            row["ratio"] = round(row["recall"] / max(row["bm25"], 1e-9), 2)
            if whole_too:
                row["whole"] = round(statistics.mean(r["strict"] for r in whole[(kind, b)]), 3)
            if kind == "all":
                row["mean_tokens"] = round(statistics.mean(tokens[b]))
                row["neighbour_share"] = round(statistics.mean(share[b]), 3)
            rows.append(row)
            report("longmsg", row)
    summary: dict[str, Any] = {"conversations": count, "seed": seed, **percentiles(latency)}
    if whole_too:
        summary["whole"] = percentiles(whole_latency)
    report("longmsg_latency", summary)
    print("\nbudget kind    n    recall bm25  ratio  msg   bm25msg whole")
    for r in rows:
        print(
            f"{r['budget']:<6} {r['kind']:<7} {r['questions']:<4} {r['recall']:<6} "
            f"{r['bm25']:<5} {r['ratio']:<6} {r['recall_message']:<5} {r['bm25_message']:<7} "
            f"{r.get('whole', '-')}"
        )
    return {"rows": rows, "latency": summary}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-neighbours", action="store_true", help="the channel off")
    parser.add_argument("--whole", action="store_true", help="no excerpts: messages whole")
    parser.add_argument(
        "--whole-too", action="store_true", help="also recall with messages whole, interleaved"
    )
    parser.add_argument("--value-power", type=float, default=excerpts.VALUE_POWER)
    args = parser.parse_args()
    excerpts.VALUE_POWER = args.value_power
    if args.whole:
        excerpts.LONG_CHARS = 2**62
    if args.no_neighbours:
        channels.NEIGHBOURS_OF = 0
    run(args.conversations, args.seed, args.whole_too)


if __name__ == "__main__":
    main()
