"""What the spans channel costs recall at scale: `recall` for LoCoMo questions at N events with
the channel off and on, alternately (both see the same load), on a home built as bench.recall
builds it. The channel adds no projection work (no table, no handler), so catch-up is unchanged.

Run: .venv/bin/python -m bench.spans_cost [--size 100000] [--queries 200] [--keep DIR]
     [--data ../shared/data/locomo/locomo10.json]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.common import percentiles, report, timed
from bench.locomo import DATA
from bench.recall import NOW, build
from mindledger.adapters.importers import locomo_samples
from mindledger.compose import Home, read_model
from mindledger.projections.retrieval import spans
from mindledger.projections.retrieval.recall import recall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", type=Path, help="build the home here once and reuse it")
    args = parser.parse_args()
    questions = [
        qa["question"] for s in locomo_samples(args.data) for qa in s["qa"] if qa["category"] != 5
    ][: args.queries]
    on = spans.SPAN_K or 10
    with tempfile.TemporaryDirectory() as tmp:
        folder = (args.keep or Path(tmp)) / f"n{args.size}"
        if (folder / "readmodel.duckdb").exists():
            home, catch_up = Home(folder), 0.0
        else:
            home, _, catch_up = build(folder, args.size, args.data)
        times: dict[int, list[float]] = {0: [], on: []}
        with read_model(home) as con:
            for k in (0, on):  # warm-up of both
                spans.SPAN_K = k
                for q in questions[:5]:
                    recall(con, q, 2000, NOW, spans=True)
            for q in questions:
                for k in (0, on):
                    spans.SPAN_K = k
                    times[k].append(timed(lambda q=q: recall(con, q, 2000, NOW, spans=True))[0])
    off_p, on_p = percentiles(times[0]), percentiles(times[on])
    report(
        "spans_cost",
        {
            "ledger_events": args.size,
            "queries": len(questions),
            "catch_up_events_per_s": round(catch_up),
            **{"recall_off_" + k: v for k, v in off_p.items()},
            **{"recall_on_" + k: v for k, v in on_p.items()},
            "p95_ratio_on_to_off": round(on_p["p95_ms"] / max(off_p["p95_ms"], 1e-9), 3),
            "p50_ratio_on_to_off": round(on_p["p50_ms"] / max(off_p["p50_ms"], 1e-9), 3),
        },
    )


if __name__ == "__main__":
    main()
