"""Exact knowledge reuse: in-process (`Asker.ask` on a mind holding N items) and `mind ask` as a
process. Every ask records its route (one event), so each figure includes that write.

    .venv/bin/python -m bench.knowledge --items 1000 --asks 200 --process-asks 20
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import new_mind, percentiles, report, timed
from mindledger.compose import Home, asker, turn_service
from mindledger.domain.model_port import CompletionModel

REPO = Path(__file__).resolve().parent.parent


def question(n: int) -> str:
    return f"What is the access code of locker {n}?"


def no_model() -> CompletionModel:
    raise AssertionError("an exact reuse called the model")


def in_process(folder: Path, items: int, asks: int) -> dict[str, float]:
    """p50/p95 of `Asker.ask` answering from an exact match among `items` items."""
    app = new_mind(folder)
    for n in range(items):
        app.remember(f"Code {n:04d}", question=question(n), state="verified", confidence=990_000)
    app.close()
    home = Home(folder)
    samples = []
    with turn_service(home) as service:
        ask = asker(home, service)
        for i in range(asks):
            took, outcome = timed(lambda i=i: ask.ask(question(i % items), no_model))
            assert outcome.route == "memory-exact"
            samples.append(took)
    return percentiles(samples)


def as_process(folder: Path, runs: int, baseline: bool = False) -> dict[str, float]:
    """p50/p95 of `mind ask ... --json` as a process of its own, start-up included
    (`baseline`: of `mind status` instead, the start-up every command pays)."""
    env = dict(os.environ, MIND_HOME=str(folder), PYTHONPATH=str(REPO), LITELLM_OFFLINE_MODE="true")
    command = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
    samples = []
    for i in range(runs):
        args = [*command, "status"] if baseline else [*command, "ask", question(i), "--json"]
        took, done = timed(lambda args=args: subprocess.run(args, env=env, capture_output=True))
        assert done.returncode == 0, done.stderr
        assert baseline or b'"memory-exact"' in done.stdout
        samples.append(took)
    return percentiles(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--asks", type=int, default=200)
    parser.add_argument("--process-asks", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "mind"
        inside = in_process(folder, args.items, args.asks)
        report("knowledge_exact_in_process", {"items": args.items, "asks": args.asks, **inside})
        process = as_process(folder, args.process_asks)
        report(
            "knowledge_exact_process", {"items": args.items, "runs": args.process_asks, **process}
        )
        status = as_process(folder, args.process_asks, baseline=True)
        report("knowledge_status_process", {"runs": args.process_asks, **status})


if __name__ == "__main__":
    main()
