"""The read model's catch-up with the vector projection running beside it (as `mind project
--follow` runs it) against without, alternately in one run, then how long the vectors take to
catch up after it: the catch-up must not wait for embeddings (the vectors lag instead).

A mind of LoCoMo messages (bench.recall's build) is copied with no read model for each run;
`follow` is stopped as soon as the read model reaches the head.

Run: .venv/bin/python -m bench.vector_lag [--size 20000] [--pairs 3] [--data locomo10.json]
     [--no-wait] (the catch-up only)
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import report
from bench.locomo import DATA
from bench.recall import build
from mindledger.compose import Home

FILES = ("ledger.sqlite", "keys.sqlite", "ledger-head.json", "config.json")


VECTORS_DEADLINE_S = 1800.0  # a run whose vectors never reach the head fails, never hangs


def fresh_copy(source: Path, target: Path) -> Home:
    """The mind at `source` without its read model. SQLite files are copied with SQLite's
    backup API: a file copy would miss what is still in the `-wal` beside it."""
    target.mkdir(mode=0o700)
    for name in FILES:
        if not (source / name).exists():
            continue
        if name.endswith(".sqlite"):
            src, dst = sqlite3.connect(source / name), sqlite3.connect(target / name)
            try:
                src.backup(dst)
            finally:
                src.close()
                dst.close()
        else:
            shutil.copy2(source / name, target / name)
        (target / name).chmod(0o600)  # a mind's files are private (`mind doctor` says so)
    return Home(target)


def one_run(source: Path, target: Path, vectors: bool, wait: bool = True) -> dict[str, Any]:
    """Seconds until the read model reaches the head (vectors beside or not), and with
    vectors, the seconds until they reach it too."""
    import mindledger.projection as projection
    from mindledger import vector_projection
    from mindledger.compose import read_model_paths
    from mindledger.projections.engine.readmodel import published_position

    home = fresh_copy(source, target)
    with open(home.path / "ledger-head.json") as f:
        head = int(__import__("json").load(f)["position"])
    paths = read_model_paths(home)
    done = threading.Event()

    def caught_up() -> bool:
        if paths.published.exists() and published_position(paths.published) >= head:
            done.set()
        return done.is_set()

    real = vector_projection.VectorFollower
    started = time.perf_counter()
    follower: Any = None

    class Kept(real):  # type: ignore[misc, valid-type]
        def stop(self, wait_s: float = 30.0) -> None:  # left running: timed after
            nonlocal follower
            follower = self

    class Off(real):  # type: ignore[misc, valid-type]
        def start(self) -> Any:
            return self

    vector_projection.VectorFollower = Kept if vectors else Off  # type: ignore[misc]
    try:
        projection.follow(home, should_stop=caught_up)
    finally:
        vector_projection.VectorFollower = real  # type: ignore[misc]
    read_model_s = time.perf_counter() - started
    out: dict[str, Any] = {"read_model_s": read_model_s, "events": head}
    if vectors and follower is not None and wait:
        from mindledger.adapters.vector_store import FILE, tracked_at

        # `follow` made the vectors give way while its catch-up ran; it has returned, so
        # nothing is busy any more (its flag would stay set: it never reached its wait).
        follower.busy = lambda: False
        follower.nudge()
        deadline = time.monotonic() + VECTORS_DEADLINE_S
        while tracked_at(home.path / FILE)[1] < head:
            if time.monotonic() > deadline or not follower.thread.is_alive():
                real.stop(follower)
                raise SystemExit(f"the vectors stopped short of position {head}")
            time.sleep(0.2)  # a poll on the file's position, not a wait for time to pass
        out["vectors_s"] = time.perf_counter() - started
        out["embedded"] = follower.embedded
    if follower is not None:
        real.stop(follower)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo's locomo10.json")
    parser.add_argument(
        "--no-wait", action="store_true", help="time the catch-up only, not the vectors after"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        build(source, args.size, args.data)
        runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
        for n in range(args.pairs):
            for arm in ("off", "on") if n % 2 == 0 else ("on", "off"):
                target = Path(tmp) / f"{arm}{n}"
                runs[arm].append(one_run(source, target, arm == "on", not args.no_wait))
                shutil.rmtree(target)
    off = [r["events"] / r["read_model_s"] for r in runs["off"]]
    on = [r["events"] / r["read_model_s"] for r in runs["on"]]
    report(
        "vector_lag",
        {
            "ledger_events": args.size,
            "pairs": args.pairs,
            "catch_up_events_per_s_vectors_off": [round(x) for x in off],
            "catch_up_events_per_s_vectors_on": [round(x) for x in on],
            "on_to_off_median": round(statistics.median(on) / statistics.median(off), 3),
            "vectors_caught_up_s": [
                round(r["vectors_s"], 1) for r in runs["on"] if "vectors_s" in r
            ],
            "embedded": [r["embedded"] for r in runs["on"] if "embedded" in r],
        },
    )


if __name__ == "__main__":
    main()
