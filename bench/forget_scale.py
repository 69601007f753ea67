"""How a forget's cost grows with the ledger (issue 27, the soak): homes of 2k, 10k and 50k
events, each then given N rounds of what the soak's clients do around a forget (two turns with
the mock model, a remembered item, the forget of that item by its id, as the server runs it:
through the floor, read model built aside). Each forget is timed by phase (the phase functions
wrapped in this process); per-phase medians over the rounds after the first (the first also
builds whatever a forget keeps between forgets) and the ratio of the largest home's medians to
the smallest's. A cost that does not grow with the ledger has a ratio near 1.

The homes are filled in bulk through the domain (commitments, concepts, threads: sealed words),
as bench.forget does, and projected once before the rounds.

Run: .venv/bin/python -m bench.forget_scale [--sizes 2000 10000 50000] [--rounds 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import fill, new_mind, report

# (label, module, attribute path): the functions timed; nested ones are counted in their own
# label and also inside their caller's.
PHASES = (
    # The plan; before the index (5442e31) it was Planner.scan and Planner.plan.
    ("plan", "mindledger.forget_aside", "plan_of"),
    ("index", "mindledger.adapters.forget_index", "ForgetIndex.catch_up"),
    ("keys", "mindledger.adapters.key_store", "SQLiteKeyStore.destroy"),
    ("aside_build", "mindledger.projections.engine.purge", "build_aside"),
    ("swap", "mindledger.projections.engine.purge", "swap_in_aside"),
    ("rebuild", "mindledger.projections.engine.purge", "rebuild_in_place"),
    ("catch_up", "mindledger.projections.engine.projector", "Projector.catch_up"),
    ("publish", "mindledger.projections.engine.projector", "Projector.publish"),
    ("maintain", "mindledger.projections.engine.projector", "Projector.refresh_tension"),
    ("maintain", "mindledger.projections.engine.projector", "Projector.sort_index"),
    ("embeddings", "mindledger.forget", "_prune_embeddings"),
    ("forget", "mindledger.application", "MindLedger.forget"),
)


class Clock:
    """Seconds spent in each phase since the last `take`."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[label] += time.perf_counter() - start

        return timed

    def take(self) -> dict[str, float]:
        spent, self.spent = dict(self.spent), defaultdict(float)
        return spent


@contextmanager
def phases_timed(clock: Clock) -> Iterator[None]:
    """Every phase function in PHASES wrapped by `clock` (those the code lacks are skipped)."""
    import importlib

    undo: list[tuple[Any, str, Any]] = []
    for label, module_name, path in PHASES:
        try:
            owner: Any = importlib.import_module(module_name)
        except ImportError:
            continue
        *parents, name = path.split(".")
        for part in parents:
            owner = getattr(owner, part)
        original = getattr(owner, name, None)
        if original is None:
            continue
        undo.append((owner, name, original))
        setattr(owner, name, clock.wrap(label, original))
    try:
        yield
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)


def home_of(root: Path, size: int) -> Path:
    """A projected home of about `size` events."""
    import mindledger

    home = root / f"n{size}"
    app = new_mind(home)
    fill(app, size)
    app.close()
    with mindledger.open(home) as mind:
        mind.project()
    return home


def rounds(home: Path, count: int) -> list[dict[str, float]]:
    """`count` soak rounds on `home`; each forget's phases in seconds."""
    import mindledger

    clock, out = Clock(), []
    with mindledger.open(home) as mind, phases_timed(clock):
        for i in range(count):
            mind.turn(f"scale t{i}", model="mock", mock_reply=f"Noted {i}.")
            mind.turn(f"scale u{i}", model="mock", mock_reply=f"Seen {i}.")
            item = mind.remember(f"scale fact {i}")
            clock.take()
            mind.forget("knowledge", str(item.id))
            out.append(clock.take())
    return out


def medians(samples: list[dict[str, float]]) -> dict[str, float]:
    labels = sorted({k for s in samples for k in s})
    return {k: round(statistics.median(s.get(k, 0.0) for s in samples), 4) for k in labels}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 50000])
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    by_size: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            start = time.perf_counter()
            home = home_of(Path(tmp), size)
            built = time.perf_counter() - start
            load = [round(os.getloadavg()[0], 2)]
            samples = rounds(home, args.rounds)
            load.append(round(os.getloadavg()[0], 2))
            by_size[size] = medians(samples[1:] or samples)
            figures = {
                "events": size,
                "build_s": round(built, 1),
                "first_forget_s": {k: round(v, 4) for k, v in samples[0].items()},
                "median_s": by_size[size],
                "load": load,
            }
            report("forget_scale", figures)
    small, large = by_size[min(by_size)], by_size[max(by_size)]
    ratio = {k: round(large[k] / small[k], 2) for k in large if small.get(k)}
    report("forget_scale", {"ratio": f"{max(by_size)}/{min(by_size)}", "median_ratio": ratio})


if __name__ == "__main__":
    main()
