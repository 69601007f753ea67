"""Turn overhead, model time excluded: a scripted (mock) model through the whole pipeline, at
growing ledger sizes, in-process through the application service and as `mind turn` processes.

Anchor: Persistent Mind Model measured 0.11 s per turn at 1k events, 2.0 s at 20k, 6.2 s at 50k.
Run: .venv/bin/python -m bench.turns [--sizes 1000 100000 1000000] [--turns 40]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from adapters.litellm_model import LiteLLMModel, ModelSettings, import_litellm
from adapters.sqlite_ledger import SQLiteLedgerReader
from bench.common import fill, new_mind, percentiles, report
from cli.compose import Home, read_model_paths, turn_service
from projections.projector import Projector

REPO = Path(__file__).resolve().parent.parent
REPLY = "Noted, I will keep that in mind.\nCOMMIT: follow up on bench item {i}"


def prepare(folder: Path, size: int) -> Home:
    app = new_mind(folder)
    fill(app, size - 1)
    home = Home(folder)
    projector = Projector(read_model_paths(home).working)
    # As a follower would have done, maintenance included (tension column, sorted term index).
    projector.catch_up(SQLiteLedgerReader(home.ledger), maintain=True)
    projector.close()
    return home


def in_process(home: Home, turns: int) -> dict[str, float]:
    import_litellm()
    samples = []
    for i in range(turns + 3):
        model = LiteLLMModel(ModelSettings(spec="mock", mock_reply=REPLY.format(i=i)))
        start = time.perf_counter()
        with turn_service(home) as service:
            outcome = service.run(f"Please remember bench item {i} for next week", model)
        total = time.perf_counter() - start
        assert outcome.status == "complete", outcome.failure
        if i >= 3:  # warm-up turns excluded
            samples.append(total - outcome.latency_ms / 1000)
    return percentiles(samples)


def process_wall(home: Home, turns: int) -> dict[str, float]:
    env = dict(os.environ, MIND_HOME=str(home.path))
    samples = []
    for i in range(turns):
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from cli.main import main; main()",
                "turn",
                f"process turn {i}",
                "--model",
                "mock",
                "--mock-reply",
                "ok",
            ],
            env=env,
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000, 1_000_000])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--process-turns", type=int, default=5)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            home = prepare(Path(tmp) / f"n{size}", size)
            figures = {
                "ledger_events": size,
                **{"turn_overhead_" + k: v for k, v in in_process(home, args.turns).items()},
            }
            figures |= {
                "mind_turn_process_" + k: v
                for k, v in process_wall(home, args.process_turns).items()
            }
            results[size] = figures
            report("turns", figures)
    smallest, largest = min(results), max(results)
    report(
        "turns_flatness",
        {
            "sizes": [smallest, largest],
            "p50_ratio_largest_to_smallest": round(
                results[largest]["turn_overhead_p50_ms"]
                / results[smallest]["turn_overhead_p50_ms"],
                2,
            ),
            "pmm_anchor_s_per_turn": {"1k": 0.11, "20k": 2.0, "50k": 6.2},
        },
    )


if __name__ == "__main__":
    main()
