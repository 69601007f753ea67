"""Retrieval latency at growing ledger sizes: LoCoMo conversations imported again and again
(under distinct sources) until the ledger holds N events, then `recall` for LoCoMo questions.

Run: .venv/bin/python -m bench.recall [--sizes 100000 1000000] [--queries 200]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.common import new_mind, percentiles, report, timed
from bench.locomo import DATA
from mindledger.adapters.importers import locomo_messages, locomo_samples, record
from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
from mindledger.compose import Home, read_model, read_model_paths
from mindledger.projections.engine.projector import Projector
from mindledger.projections.retrieval.recall import recall

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def build(folder: Path, size: int) -> tuple[Home, float, float]:
    app = new_mind(folder)
    samples = locomo_samples(DATA)
    messages = [(s, list(locomo_messages(s))) for s in samples]
    written, copy = 1, 0
    start = time.perf_counter()
    while written < size:
        for s, turns in messages:
            take = turns[: size - written]
            added, _ = record(app, f"bench/{copy}/{s['sample_id']}", [], iter(take))
            written += added + 1
            if written >= size:
                break
        copy += 1
    fill = time.perf_counter() - start
    home = Home(folder)
    projector = Projector(read_model_paths(home).working)
    # As the follower would have done: including its maintenance (the sorted term index).
    seconds, applied = timed(
        lambda: projector.catch_up(SQLiteLedgerReader(home.ledger), maintain=True)
    )
    projector.close()
    return home, written / fill, applied / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    questions = [
        qa["question"] for s in locomo_samples(DATA) for qa in s["qa"] if qa["category"] != 5
    ][: args.queries]
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            home, fill_rate, project_rate = build(Path(tmp) / f"n{size}", size)
            with read_model(home) as con:
                for q in questions[:5]:
                    recall(con, q, 2000, NOW)  # warm-up
                samples = [timed(lambda q=q: recall(con, q, 2000, NOW))[0] for q in questions]
            report(
                "recall",
                {
                    "ledger_events": size,
                    "queries": len(samples),
                    "import_events_per_s": round(fill_rate),
                    "catch_up_events_per_s": round(project_rate),
                    **{"recall_" + k: v for k, v in percentiles(samples).items()},
                },
            )


if __name__ == "__main__":
    main()
