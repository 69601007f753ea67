"""Turn overhead, model time excluded: a scripted (mock) model through the whole pipeline, at
growing ledger sizes, in-process through the application service and as `mind turn` processes.

Anchor: Persistent Mind Model measured 0.11 s per turn at 1k events, 2.0 s at 20k, 6.2 s at 50k.
Reference in the same run: `raw_floor`, a turn's kind of work on raw SQLite and DuckDB
connections without the product (the turn's ratio to it drifts less than its milliseconds).
Both are also reported in CPU time (`process_time`: every thread of the process; the model's
own excluded): on a shared 2-core machine, four runs minutes apart gave wall ratios of 0.71 to
2.59 at 1k and 20k events (the floor runs after the turns, its commit waiting on a busy disk)
and CPU ratios of 2.2 to 3.1.
Every size is built first, then the sizes take turns (a turn at 1k, one at 100k, one at 1M,
again): these machines' speed drifts by a third within minutes, and measuring the sizes one
after another made their ratio measure the drift as much as the size.
`--served-gap S` also times turns through the floor (`mindledger.open`, as `mind serve` holds
a mind) with S seconds between them, in which it catches its kept read session up.
`--homes DIR` keeps each size's built home in DIR and copies it for each run (building 1M
events takes longer than timing its turns; a run never changes the kept copy).
Run: .venv/bin/python -m bench.turns [--sizes 1000 100000 1000000] [--turns 40] [--served-gap S]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import fill, new_mind, percentiles, report
from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings, import_litellm
from mindledger.compose import Home, open_reader, read_model_paths, turn_service
from mindledger.domain.turns import TurnService
from mindledger.projections.engine.projector import Projector

REPO = Path(__file__).resolve().parent.parent
REPLY = "Noted, I will keep that in mind.\nCOMMIT: follow up on bench item {i}"


def prepare(folder: Path, size: int) -> Home:
    app = new_mind(folder)
    fill(app, size - 1)
    home = Home(folder)
    projector = Projector(read_model_paths(home).working)
    # As a follower would have done, maintenance included (tension column, sorted term index).
    projector.catch_up(open_reader(home), maintain=True)  # opens sealed fields
    projector.close()
    return home


def built(folder: Path, size: int, kept: Path | None) -> Home:
    """A home of `size` events at `folder`: prepared there, or copied from `kept` (prepared
    there first when it is not yet; a partial build is never kept)."""
    if kept is None:
        return prepare(folder, size)
    template = kept / f"n{size}"
    if not template.exists():
        kept.mkdir(parents=True, exist_ok=True)
        partial = kept / f"n{size}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        prepare(partial, size)
        partial.rename(template)
    shutil.copytree(template, folder)
    return Home(folder)


class ScriptedModel(LiteLLMModel):
    """The mock model, keeping the CPU time of its last answer (excluded from the turn's)."""

    cpu_s = 0.0

    def complete(self, messages: Any, on_token: Any = None) -> Any:
        start = time.process_time()
        try:
            return super().complete(messages, on_token)
        finally:
            self.cpu_s = time.process_time() - start


def turn_cost(service: TurnService, i: int) -> tuple[float, float]:
    """Wall and CPU seconds of one turn through the application service, the model's time
    excluded (its wall time as the turn records it, its CPU time as it took it)."""
    model = ScriptedModel(ModelSettings(spec="mock", mock_reply=REPLY.format(i=i)))
    start, cpu = time.perf_counter(), time.process_time()
    outcome = service.run(f"Please remember bench item {i} for next week", model)
    total, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert outcome.status == "complete", outcome.failure
    return total - outcome.latency_ms / 1000, cpu - model.cpu_s


def one_turn(service: TurnService, i: int) -> float:
    """Seconds of one turn through the application service, the model's time excluded."""
    return turn_cost(service, i)[0]


def in_process(homes: list[Home], turns: int) -> list[dict[str, float]]:
    """Turn overhead at each home, the homes taking turns; 3 warm-up turns each excluded. Each
    home's turn service stays open across its turns, as a served mind's (`mind serve`) does."""
    import_litellm()
    samples: list[list[tuple[float, float]]] = [[] for _ in homes]
    services = [turn_service(home) for home in homes]
    try:
        for i in range(turns + 3):
            for n, service in enumerate(services):
                took = turn_cost(service, i)
                if i >= 3:
                    samples[n].append(took)
    finally:
        for service in services:
            service.close()
    return [with_cpu(s) for s in samples]


def with_cpu(samples: list[tuple[float, float]]) -> dict[str, float]:
    """Wall-time percentiles of (wall, CPU) samples, and the CPU time's median."""
    cpu = percentiles([c for _, c in samples])["p50_ms"]
    return percentiles([w for w, _ in samples]) | {"cpu_p50_ms": cpu}


def served(homes: list[Home], turns: int, gap: float) -> list[dict[str, float]]:
    """Turn time through the floor (`mindledger.open`, as `mind serve` holds each mind) with
    `gap` seconds between turns, as a served mind has between requests: the mind catches its
    kept read session up to each turn in that time. The scripted model answers at once (its
    time is in the figure: well under a millisecond)."""
    import mindledger

    samples: list[list[float]] = [[] for _ in homes]
    minds = [mindledger.open(home.path) for home in homes]
    try:
        for i in range(turns + 3):
            for n, mind in enumerate(minds):
                start = time.perf_counter()
                mind.turn(
                    f"Please remember bench item {i}",
                    model="mock",
                    mock_reply=REPLY.format(i=i),
                )
                if i >= 3:
                    samples[n].append(time.perf_counter() - start)
                time.sleep(gap)
    finally:
        for mind in minds:
            mind.close()
    return [percentiles(s) for s in samples]


def raw_floor(home: Home, rounds: int) -> dict[str, float]:
    """The reference measured in the same run: a turn's kind of work on raw connections,
    without the product: one SQLite transaction of two rows (WAL, synchronous=FULL, as the
    ledger), then the read model attached, 40 point queries (about a turn's statements), and
    detached. These machines drift by a third between runs; the turn's ratio to this far less."""
    import sqlite3

    from mindledger.projections.engine.duckdb_files import close, connect

    scratch = home.path / "floor.sqlite"
    db = sqlite3.connect(scratch, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS t (a INTEGER, b TEXT)")
    samples = []
    for i in range(rounds + 3):
        start, cpu = time.perf_counter(), time.process_time()
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(i, "x" * 200), (i, "y" * 200)])
        db.execute("COMMIT")
        con = connect(home.readmodel, read_only=True)
        for n in range(40):
            con.execute("SELECT type FROM events WHERE position = ?", [n + 1]).fetchall()
        close(con)
        if i >= 3:
            samples.append((time.perf_counter() - start, time.process_time() - cpu))
    db.close()
    return with_cpu(samples)


def process_wall(home: Home, turns: int) -> dict[str, float]:
    """A one-shot `mind turn` process, run in itself: without MIND_NO_SERVER the first spawned
    a background server for the home that later ones went through (a mix of the two in one
    figure: 17 s p50 at 1M), and which outlived the bench (idle 600 s) in a deleted folder,
    sometimes writing into it while it was removed ("Directory not empty")."""
    env = dict(os.environ, MIND_HOME=str(home.path), MIND_NO_SERVER="1")
    samples = []
    for i in range(turns):
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from mindledger.cli.main import main; main()",
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
    parser.add_argument(
        "--served-gap",
        type=float,
        default=0.0,
        help="also time turns through the floor with this many seconds between them",
    )
    parser.add_argument(
        "--homes",
        type=Path,
        help="keep each size's built home here and time copies of it (built once, reused)",
    )
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        homes = [built(Path(tmp) / f"n{size}", size, args.homes) for size in args.sizes]
        turns = in_process(homes, args.turns)
        gapped = served(homes, args.turns, args.served_gap) if args.served_gap > 0 else None
        floors = [raw_floor(home, args.turns) for home in homes]
        for n, (size, home, turn, floor) in enumerate(
            zip(args.sizes, homes, turns, floors, strict=True)
        ):
            figures = {
                "ledger_events": size,
                **{"turn_overhead_" + k: v for k, v in turn.items()},
                **{"raw_floor_" + k: v for k, v in floor.items()},
            }
            figures["turn_to_raw_floor_p50"] = round(
                figures["turn_overhead_p50_ms"] / figures["raw_floor_p50_ms"], 2
            )
            figures["turn_to_raw_floor_cpu_p50"] = round(
                figures["turn_overhead_cpu_p50_ms"] / figures["raw_floor_cpu_p50_ms"], 2
            )
            if gapped is not None:
                figures |= {"served_turn_" + k: v for k, v in gapped[n].items()}
                figures["served_gap_s"] = args.served_gap
                figures["served_turn_to_raw_floor_p50"] = round(
                    figures["served_turn_p50_ms"] / figures["raw_floor_p50_ms"], 2
                )
            if args.process_turns > 0:  # 0: in-process figures only
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
