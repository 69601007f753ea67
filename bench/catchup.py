"""Catch-up and replay against the previous release and the raw pipeline, in one run: the same
ledger caught up by each tree's projector (a process each, alternately), and by the raw
pipeline of bench/projection.py (the same rows read, decoded, opened, Arrow-built and inserted
by a plain script); then `replay` (rebuild into a new file, maintenance included) of each tree
and the raw pipeline, with peak RSS.

Run: .venv/bin/python -m bench.catchup --base ../previous-tree [--size 100000] [--pairs 3]
     [--replay] [--root /tmp/mind-bench-catchup]
(the ledger is built once under --root by bench.common.fill and reused)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path
from typing import Any

from bench.common import report, run_in_tree

REPO = Path(__file__).resolve().parent.parent

WORKER = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
job = json.loads(sys.argv[1])
folder = Path(job["folder"])
if job["do"] == "build":
    from bench.common import fill, new_mind
    fill(new_mind(folder), job["size"] - 1)
    print(json.dumps({}))
    sys.exit(0)
# Every side's imports before its clocks, as the raw pipeline's are (pyarrow was imported
# inside the catch-up's timing, the raw pipeline's outside it).
import numpy, orjson, pyarrow, pyarrow.compute, cryptography.hazmat.primitives.ciphers.aead
if job["do"] == "raw":
    from bench.projection import raw_pipeline_rate
    cpu, main = time.process_time(), time.thread_time()
    rate = raw_pipeline_rate(folder)
    cpu, main = time.process_time() - cpu, time.thread_time() - main
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"events_per_s": rate, "cpu_s": cpu, "main_s": main, "rss_kb": rss}))
else:
    from mindledger.compose import Home, open_reader
    from mindledger.projections.engine.projector import Projector
    from mindledger.projections.engine.replay import rebuild
    reader = open_reader(Home(folder))
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        start, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
        if job["do"] == "replay":
            n = rebuild(Path(tmp) / "replayed.duckdb", reader)
        else:
            projector = Projector(Path(tmp) / "rm.duckdb")
            n = projector.catch_up(reader)
            projector.con.execute("CHECKPOINT")  # deferred by the projector: part of the work
            projector.close()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        main = time.thread_time() - main
    print(json.dumps({"events_per_s": n / seconds, "seconds": seconds, "cpu_s": cpu,
                      "main_s": main,
                      "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def worker(tree: Path, job: dict[str, Any]) -> dict[str, Any]:
    """WORKER run in `tree` (`bench.common.run_in_tree`)."""
    return run_in_tree(tree, WORKER, job)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", type=Path, required=True, help="the previous release's tree")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--replay", action="store_true", help="also replay, with peak RSS")
    parser.add_argument("--root", type=Path, default=Path("/tmp/mind-bench-catchup"))
    args = parser.parse_args()
    folder = args.root / f"n{args.size}"
    if not (folder / "ledger.sqlite").exists():
        worker(REPO, {"do": "build", "folder": str(folder), "size": args.size})
    trees = {"previous": args.base.resolve(), "this": REPO}
    kinds = ["catch_up"] * args.pairs + (["replay"] if args.replay else [])
    runs: list[dict[str, Any]] = []
    for n, kind in enumerate(kinds):
        raw = worker(REPO, {"do": "raw", "folder": str(folder)})
        for side, tree in trees.items():
            got = worker(tree, {"do": kind, "folder": str(folder)})
            run = {
                "kind": kind,
                "round": n,
                "side": side,
                "events_per_s": round(got["events_per_s"]),
                "rss_mb": round(got["rss_kb"] / 1024),
                "raw_events_per_s": round(raw["events_per_s"]),
                "raw_rss_mb": round(raw["rss_kb"] / 1024),
                "ratio_to_raw": round(got["events_per_s"] / raw["events_per_s"], 3),
                # CPU seconds (DuckDB's threads included) against the raw pipeline's: the
                # steadier figure on a busy machine, where wall time waits for a core.
                "cpu_s": round(got["cpu_s"], 2),
                "raw_cpu_s": round(raw["cpu_s"], 2),
                "cpu_ratio_to_raw": round(raw["cpu_s"] / got["cpu_s"], 3),
                # The main thread's CPU alone: DuckDB's second thread burns more the busier
                # the machine (0.3-0.7 s more at load 15, on either side) and took no work
                # off the main thread (SET threads = 1 left its time unchanged).
                "main_cpu_ratio_to_raw": round(raw["main_s"] / got["main_s"], 3),
                "rss_to_raw": round(got["rss_kb"] / raw["rss_kb"], 2),
                "load": round(os.getloadavg()[0], 2),
            }
            report("catchup", {"size": args.size, **run})
            runs.append(run)
    for kind in dict.fromkeys(kinds):
        for side in trees:
            mine = [r for r in runs if r["kind"] == kind and r["side"] == side]
            print(
                json.dumps(
                    {
                        "summary": kind,
                        "side": side,
                        "median_ratio_to_raw": statistics.median(r["ratio_to_raw"] for r in mine),
                        "median_cpu_ratio_to_raw": statistics.median(
                            r["cpu_ratio_to_raw"] for r in mine
                        ),
                        "median_main_cpu_ratio_to_raw": statistics.median(
                            r["main_cpu_ratio_to_raw"] for r in mine
                        ),
                        "median_rss_to_raw": statistics.median(r["rss_to_raw"] for r in mine),
                    }
                )
            )


if __name__ == "__main__":
    main()
