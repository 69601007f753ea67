"""LoCoMo retrieval benchmark: evidence recall of `mind recall` against a plain BM25 baseline.

Every one of the 1,986 questions (category 5, adversarial, included) is recalled against a mind
that imported only its conversation. At budgets of 500, 1,000 and 2,000 tokens we report evidence
recall (fraction of gold dia_ids among the items that fit) with its 95% Wilson interval,
recall@10 (gold among the first ten evidence items), session-level R@5 and R@10 (gold sessions
among the first sessions of the ranking: the figure peers quote) and tokens per question, per
category, for categories 1-4 (the headline) and for all five; plus retrieval latency. The
baseline is rank_bm25's BM25Okapi over the same turns, rendered and packed the same way. Scoring
lives in bench/locomo_scoring.py.

`--tune MODULE.NAME=V1,V2,...` (repeatable; MODULE under mindledger.projections.retrieval, read
at call time) scores every combination of the values, then reports the leave-one-conversation-out
figure: for each conversation, the combination best on the other nine (mean evidence recall over
the budgets, categories 1-4) scores it. List the default value first: ties keep it.

With `--vectors both` every question is also recalled with the vector channel (the offline
all-MiniLM-L6-v2 through LiteLLM, adapters/embeddings.py): each conversation's messages are
embedded once before its questions (timed apart), the question at every recall (in the
latency). `--vectors on` reports only that arm.

Run: .venv/bin/python -m bench.locomo [--data ../shared/data/locomo/locomo10.json] [--samples N]
     [--vectors off|on|both] [--spans off|on] [--tune spans.SPAN_K=0,20 ...]
(the spans channel is off by default, as a mind has it; `--spans on --tune ...` tunes it)
"""

from __future__ import annotations

import argparse
import ast
import importlib
import itertools
import re
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rank_bm25 import BM25Okapi

from bench.common import new_mind, percentiles, report
from bench.locomo_scoring import (
    CATEGORIES,
    Scored,
    gold_ids,
    groups,
    in_categories,
    leave_one_out,
    scores,
    session_recall,
    summary_row,
)
from bench.vector_cache import CachedMiniLM
from mindledger.adapters.embeddings import LiteLLMEmbedder
from mindledger.adapters.importers import import_locomo, locomo_messages, locomo_samples
from mindledger.compose import Home, read_model
from mindledger.domain.context_port import ContextItem
from mindledger.domain.settings import DEFAULT_EMBEDDING_MODEL
from mindledger.projections.retrieval.channels import vector_channel
from mindledger.projections.retrieval.context import fit
from mindledger.projections.retrieval.excerpts import pack
from mindledger.projections.retrieval.item_text import day_of, message_text
from mindledger.projections.retrieval.recall import NO_LIMIT, gather, rank

BUDGETS = (500, 1000, 2000)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"
NOW = datetime(2024, 1, 1, tzinfo=UTC)  # after every LoCoMo session
__all__ = ["DATA", "gold_ids", "scores"]  # kept importable here for other benchmarks

RETRIEVAL = "mindledger.projections.retrieval"
Setting = tuple[tuple[str, Any], ...]  # (module.NAME, value) pairs


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


def warm_vectors(con: Any, embedder: Any) -> float:
    """Embed the conversation's messages and windows once (what recall's vector channel
    reads), seconds."""
    start = time.perf_counter()
    vector_channel(con, "", NO_LIMIT, embedder)
    return time.perf_counter() - start


def parse_tune(specs: list[str]) -> list[Setting]:
    """`module.NAME=v1,v2` specs -> every combination, the defaults' combination first."""
    axes = []
    for spec in specs:
        name, _, values = spec.partition("=")
        module, _, attr = name.rpartition(".")
        if not module or not values:
            raise SystemExit(f"--tune {spec!r}: write MODULE.NAME=V1,V2 (e.g. recall.RRF_K=60,30)")
        target = importlib.import_module(f"{RETRIEVAL}.{module}")
        if not hasattr(target, attr):
            raise SystemExit(f"--tune {spec!r}: {module} has no {attr}")
        axes.append([(name, ast.literal_eval(v)) for v in values.split(",")])
    return [tuple(c) for c in itertools.product(*axes)] if axes else [()]


def apply(setting: Setting) -> None:
    for name, value in setting:
        module, _, attr = name.rpartition(".")
        setattr(importlib.import_module(f"{RETRIEVAL}.{module}"), attr, value)


def current(setting: Setting) -> Setting:
    """The values the names of `setting` hold now (to put them back)."""
    return tuple(
        (
            n,
            getattr(
                importlib.import_module(f"{RETRIEVAL}.{n.rpartition('.')[0]}"), n.rpartition(".")[2]
            ),
        )
        for n, _ in setting
    )


def label_of(setting: Setting) -> str:
    return ", ".join(f"{n}={v}" for n, v in setting) or "defaults"


class Run:
    """Every question's scores, by arm and setting, and the BM25 baseline's."""

    def __init__(self, arms: list[str], settings: list[Setting]) -> None:
        self.ours: dict[str, list[list[Scored]]] = {a: [[] for _ in settings] for a in arms}
        self.base: list[Scored] = []
        self.latencies: dict[str, list[float]] = {a: [] for a in arms}
        self.full_context: list[int] = []
        self.warm: list[float] = []


# The spans channel as a mind has it by default (`recall.spans`: off); `--spans on` measures it.
SPANS = False


def recall_question(con: Any, sample: str, qa: dict[str, Any], embed: Any) -> tuple[Scored, float]:
    gold = gold_ids(qa.get("evidence", []))
    start = time.perf_counter()
    ranked = rank(gather(con, qa["question"], NOW, embed=embed, spans=SPANS))
    fitted = {b: pack(con, ranked, qa["question"], b) for b in BUDGETS}
    took = time.perf_counter() - start
    row = Scored(sample, qa["category"], sessions=session_recall(ranked, gold))
    for b in BUDGETS:
        row.by_budget[b] = scores(fitted[b].items, gold)
        row.tokens[b] = fitted[b].tokens
    return row, took


def run(
    data: Path, limit: int | None, vectors: str, settings: list[Setting], cache: Path | None = None
) -> Run:
    samples = locomo_samples(data)[:limit]
    arms = {"off": ["off"], "on": ["on"], "both": ["off", "on"]}[vectors]
    out = Run(arms, settings)
    defaults = current(settings[0])
    with tempfile.TemporaryDirectory() as tmp:
        for sample in samples:
            sid = sample["sample_id"]
            folder = Path(tmp) / sid
            app = new_mind(folder)
            import_locomo(app, data, sid)
            bm25, turns, full = baseline(sample)
            out.full_context.append(full)
            embedder: Any = (
                CachedMiniLM(cache)
                if cache is not None
                else LiteLLMEmbedder(
                    DEFAULT_EMBEDDING_MODEL, folder / "embeddings.sqlite", app.text_keys
                )
            )
            questions = [qa for qa in sample["qa"] if gold_ids(qa.get("evidence", []))]
            with read_model(Home(folder)) as con:
                if "on" in arms:
                    out.warm.append(warm_vectors(con, embedder))
                for n, setting in enumerate(settings):
                    apply(setting)
                    for qa in questions:
                        for arm in arms:
                            embed = embedder if arm == "on" else None
                            row, took = recall_question(con, sid, qa, embed)
                            out.ours[arm][n].append(row)
                            if n == 0:
                                out.latencies[arm].append(took)
                apply(defaults)
                for qa in questions:
                    out.base.append(baseline_question(bm25, turns, sid, qa))
    return out


def baseline_question(
    bm25: BM25Okapi, turns: list[ContextItem], sample: str, qa: dict[str, Any]
) -> Scored:
    gold = gold_ids(qa["evidence"])
    order = bm25.get_scores(re.findall(r"\w+", qa["question"].lower()))
    by_score = [turns[i] for i in sorted(range(len(turns)), key=lambda i: (-order[i], i))]
    row = Scored(sample, qa["category"], sessions=session_recall(by_score, gold))
    for b in BUDGETS:
        fitted = fit(by_score, b)
        row.by_budget[b] = scores(fitted.items, gold)
        row.tokens[b] = fitted.tokens
    return row


def print_table(title: str, ours: list[Scored], base: list[Scored], name: str) -> None:
    print(f"\n{title}:")
    print(
        "budget  category  n     recall  ci95          bm25   ratio  r@10   bm25@10 "
        "sR@5   sR@10  bm25 sR@5/10  tokens"
    )
    for b in BUDGETS:
        for label, cats in groups():
            row = summary_row(in_categories(ours, cats), in_categories(base, cats), b, label)
            report(name, row)
            lo, hi = row["ci95"]
            print(
                f"{b:<7} {label:<9} {row['questions']:<5} {row['evidence_recall']:<7} "
                f"{lo:.3f}-{hi:.3f}   {row['bm25_recall']:<6} {row['ratio_to_bm25']:<6} "
                f"{row['recall_at_10']:<6} {row['bm25_recall_at_10']:<7} "
                f"{row['session_r5']:<6} {row['session_r10']:<6} "
                f"{row['bm25_session_r5']}/{row['bm25_session_r10']:<8} {row['tokens_mean']}"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--vectors", choices=("off", "on", "both"), default="off")
    parser.add_argument("--spans", choices=("off", "on"), default="off")
    parser.add_argument(
        "--vector-cache",
        type=Path,
        default=None,
        help="keep the offline MiniLM's vectors of the texts in this file between runs "
        "(no LiteLLM; bench/vector_cache.py)",
    )
    parser.add_argument("--tune", action="append", default=[], metavar="MODULE.NAME=V1,V2")
    args = parser.parse_args()
    global SPANS
    SPANS = args.spans == "on"
    settings = parse_tune(args.tune)
    done = run(args.data, args.samples, args.vectors, settings, args.vector_cache)
    print(f"categories: {CATEGORIES}")
    for arm, by_setting in done.ours.items():
        label = "" if arm == "off" else "_vectors_on"
        arm_name = "vector channel " + arm
        for n, setting in enumerate(settings):
            title = f"{arm_name}, {label_of(setting)}"
            print_table(title, by_setting[n], done.base, "locomo" + label)
        if len(settings) > 1:
            held, chosen = leave_one_out(by_setting, BUDGETS)
            print_table(
                f"{arm_name}, leave-one-conversation-out", held, done.base, "locomo_loo" + label
            )
            report(
                "locomo_loo_choices" + label,
                {s: label_of(settings[i]) for s, i in chosen.items()},
            )
        lat = done.latencies[arm]
        summary: dict[str, Any] = {
            "vectors": arm,
            "questions": len(by_setting[0]),
            "full_context_tokens_mean": round(statistics.mean(done.full_context)),
            **{"retrieval_" + k: v for k, v in percentiles(lat).items()},
        }
        if arm == "on":
            summary["embed_conversation_seconds_mean"] = round(statistics.mean(done.warm), 2)
        report("locomo_summary", summary)


if __name__ == "__main__":
    main()
