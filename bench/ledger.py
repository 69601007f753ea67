"""Ledger benchmarks: append throughput vs raw SQLite, verify rate at 100k, status cold start.

Run: .venv/bin/python -m bench.ledger [--commands 2000] [--rounds 10] [--base ../wt-base]
[--verify-events 100000 (0: append only)]

The append figure is measured alternately: one process per side (this tree's appends, the
`--base` tree's if given, raw SQLite inserts at the ledger's own pragmas) each runs a slice of
the commands in turn, in a rotating order, so a machine whose load changes minute to minute
weighs on every side alike (bench/append_worker.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from bench.common import fill, new_mind, percentiles, report, timed
from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
from mindledger.adapters.verification import verify_ledger

REPO = Path(__file__).resolve().parent.parent


WORKER = Path(__file__).resolve().parent / "append_worker.py"


@contextmanager
def _worker(kind: str, folder: Path, tree: Path) -> Iterator[subprocess.Popen[str]]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    process = subprocess.Popen(
        [sys.executable, str(WORKER), kind, str(folder)],
        env=env,
        cwd=tree,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield process
    finally:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(timeout=60)


def append_alternating(
    root: Path, commands: int, rounds: int, base: Path | None
) -> dict[str, float]:
    """Commands per second of each side, and each append side's ratio to raw SQLite."""
    sides = {"append": ("append", REPO), "raw": ("raw", REPO)}
    if base is not None:
        sides["base_append"] = ("append", base.resolve())
    per_round = max(1, commands // rounds)
    seconds = dict.fromkeys(sides, 0.0)
    with ExitStack() as stack:
        workers = {
            name: stack.enter_context(_worker(kind, root / name, tree))
            for name, (kind, tree) in sides.items()
        }
        names = list(workers)
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                process = workers[name]
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(f"{per_round}\n")
                process.stdin.flush()
                seconds[name] += float(process.stdout.readline())
    done = per_round * rounds
    rates = {name: done / s for name, s in seconds.items()}
    figures: dict[str, float] = {"commands_each": done, "rounds": rounds}
    figures |= {f"{name}_per_s": round(rate) for name, rate in rates.items()}
    figures["events_ratio_to_raw"] = round(rates["append"] / rates["raw"], 3)
    if base is not None:
        figures["base_events_ratio_to_raw"] = round(rates["base_append"] / rates["raw"], 3)
    return figures


def verify_rate(folder: Path, events: int) -> dict[str, float]:
    app = new_mind(folder)
    fill(app, events)
    reader = SQLiteLedgerReader(folder / "ledger.sqlite")
    seconds, result = timed(lambda: verify_ledger(reader))
    assert result.ok
    return {
        "events": result.events,
        "verify_events_per_s": round(result.events / seconds),
        "verify_seconds": round(seconds, 2),
    }


def status_cold_start(home: Path, runs: int = 7) -> dict[str, float]:
    env = dict(os.environ, MIND_HOME=str(home))
    samples = []
    for _ in range(runs):
        seconds, proc = timed(
            lambda: subprocess.run(
                [sys.executable, "-c", "from mindledger.cli.main import main; main()", "status"],
                env=env,
                cwd=REPO,
                capture_output=True,
            )
        )
        assert proc.returncode == 0, proc.stderr
        samples.append(seconds)
    baseline = [
        timed(lambda: subprocess.run([sys.executable, "-c", "pass"]))[0] for _ in range(runs)
    ]
    return {"status_cold_" + k: v for k, v in percentiles(samples).items()} | {
        "python_startup_p50_ms": percentiles(baseline)["p50_ms"]
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--base", type=Path, help="a checkout of the previous release")
    parser.add_argument(
        "--verify-events", type=int, default=100_000, help="0: the append figure only"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        report("append", append_alternating(root, args.commands, args.rounds, args.base))
        if args.verify_events > 0:
            report("verify", verify_rate(root / "verify", args.verify_events))
            report("status", status_cold_start(root / "verify"))


if __name__ == "__main__":
    main()
