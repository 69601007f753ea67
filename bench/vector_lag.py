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


def fresh_copy(source: Path, target: Path) -> Home:
    target.mkdir(mode=0o700)
    for name in FILES:
        if (source / name).exists():
            shutil.copy2(source / name, target / name)
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

        while tracked_at(home.path / FILE)[1] < head:
            time.sleep(0.2)
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
