"""Shared pieces for benchmarks: building large ledgers quickly, timing, reporting."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mindledger.compose import Home, open_mind, open_reader
from mindledger.domain.application import Mind
from mindledger.domain.commitment import Commitment, commitment_cid
from mindledger.domain.concept import Concept
from mindledger.domain.thread import Thread

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def new_mind(folder: Path) -> Mind:
    """An initialised SQLite mind in `folder`."""
    home = Home(folder)
    app = open_mind(home, create=True)
    app.init("Bench", open_reader(home).meta()[0])
    return app


def fill(app: Mind, events: int, per_save: int = 200) -> int:
    """Append about `events` realistic events (commitments, closes, concepts, threads) in
    batched saves, the way an import would; returns how many were appended."""
    written, i, batch = 0, 0, []
    cids: set[str] = set()
    while written < events:
        at = T0 + timedelta(seconds=i * 37)
        kind = i % 10
        if kind < 5:
            text = f"Promise {i}: follow up on item {i * 7 % 1000}"
            c = Commitment.open(commitment_cid(text, app.text_keys), text, "user", 1, at)
            if c.cid in cids:  # a 40-bit CID clash: the application would refuse it too
                i += 1
                continue
            cids.add(c.cid)
            if kind < 2:
                c.close("done", (), at + timedelta(hours=3))
            batch.extend(c.collect())
        elif kind < 8:
            concept = Concept.define_new(f"topic.n{i}", f"The meaning of topic {i}", at)
            batch.extend(concept.collect())
        else:
            t = Thread.open(
                f"Question {i}", f"Why did event {i} happen the way it did?", "user", at
            )
            t.mention(at + timedelta(minutes=5))
            batch.extend(t.collect())
        i += 1
        if len(batch) >= per_save:
            app.save(*batch)
            written += len(batch)
            batch = []
    if batch:
        app.save(*batch)
        written += len(batch)
    return written


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50 and p95 in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2), "p95_ms": round(p95 * 1000, 2)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken and the result."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def report(name: str, figures: dict[str, Any], out: Path | None = None) -> None:
    """Print figures as one JSON line (and append them to bench/out/NAME.jsonl)."""
    line = json.dumps({"bench": name, **figures})
    print(line, flush=True)
    folder = out or Path(__file__).resolve().parent / "out"
    folder.mkdir(exist_ok=True)
    with open(folder / f"{name}.jsonl", "a") as f:
        f.write(line + "\n")


def run_in_tree(tree: Path, script: str, job: dict[str, Any]) -> dict[str, Any]:
    """Run `script` (given `job` as JSON in argv[1]) in a process whose code is `tree`'s (first
    on sys.path), for figures of two trees taken alternately; returns its last JSON line."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(job)],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result
