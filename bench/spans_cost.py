"""What the spans channel costs recall at scale: `recall` for LoCoMo questions at N events with
the channel off and on, alternately (both see the same load), on a home built as bench.recall
builds it. The channel adds no projection work (no table, no handler), so catch-up is unchanged.

Run: .venv/bin/python -m bench.spans_cost [--size 100000] [--queries 200] [--keep DIR]
     [--data ../shared/data/locomo/locomo10.json]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.common import percentiles, report, timed
from bench.recall import NOW, cost_arguments, home_of, questions_of
from mindledger.compose import read_model
from mindledger.projections.retrieval import spans
from mindledger.projections.retrieval.recall import recall


def main() -> None:
    parser = cost_arguments()
    args = parser.parse_args()
    questions = questions_of(args.data, args.queries)
    on = spans.SPAN_K or 10
    with tempfile.TemporaryDirectory() as tmp:
        home, catch_up = home_of(args.keep or Path(tmp), args.size, args.data)
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
