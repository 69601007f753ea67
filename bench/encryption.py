"""Sealed events (issue 16) against the release before them: turn overhead p50 and projector
catch-up, alternating runs of the two trees, each on ledgers its own code built.

Each tree runs in a subprocess of its own (PYTHONPATH and cwd set to it), with the same
parameters: first each builds its ledgers (fill, then a maintained catch-up, as bench/turns.py
prepares them), kept under --root so later invocations reuse them; then the runs alternate,
previous, this, previous, this, ... Each run takes its turns at every size in turn (3 warm-up
rounds excluded), measures bench/turns.py's raw floor, then catches a fresh DuckDB file up to
the largest ledger's built position, with a raw reference (SQLite row read and an Arrow
insert into DuckDB of its first 100k rows) and the load average beside every run. That catch-up
runs where the turns ran (litellm loaded, as in a server); the same catch-up is then measured
again in a process of its own without litellm, as `mind project` and `mind replay` run it.

Run: .venv/bin/python -m bench.encryption --base ../wt-base [--sizes 1000 100000]
     [--catch-up 100000] [--pairs 3] [--turns 30] [--root /tmp/mind-bench-encryption]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import report, run_in_tree

REPO = Path(__file__).resolve().parent.parent
SIDES = ("previous", "this")

# Runs inside either tree: only what both have (bench.common, bench.turns, cli.compose).
WORKER = r"""
import json, shutil, sqlite3, sys, tempfile, time
from pathlib import Path

import duckdb, pyarrow as pa

from bench.common import fill, new_mind, percentiles
from mindledger.compose import Home, open_reader, read_model_paths
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.schema import ARROW, TABLES

job = json.loads(sys.argv[1])


def built(folder):
    return json.loads((Path(folder) / "built.json").read_text())


def build(folder, size):
    app = new_mind(folder)
    fill(app, size - 1)
    home = Home(folder)
    con = sqlite3.connect(home.ledger)
    stop = con.execute("SELECT max(position) FROM ledger_chain").fetchone()[0]
    con.close()
    reader = open_reader(home)  # this release's reader opens sealed fields; the previous had none
    projector = Projector(read_model_paths(home).working)
    projector.catch_up(reader, maintain=True)
    projector.close()
    reader.close()
    (folder / "built.json").write_text(json.dumps({"size": size, "stop": stop}))


def turns(folders, rounds):
    from mindledger.adapters.litellm_model import import_litellm
    from bench.turns import one_turn, raw_floor

    import_litellm()
    homes = [Home(Path(f)) for f in folders]
    samples = [[] for _ in homes]
    # A tree whose one_turn takes a held turn service (as `mind serve` holds one) gets one per
    # home; an older tree's one_turn takes the home and opens its own per turn.
    import inspect

    held = "service" in inspect.signature(one_turn).parameters
    if held:
        from mindledger.compose import turn_service

        targets = [turn_service(home) for home in homes]
    else:
        targets = homes
    for i in range(rounds + 3):
        for n, target in enumerate(targets):
            took = one_turn(target, job["offset"] + i)
            if i >= 3:
                samples[n].append(took)
    if held:
        for service in targets:
            service.close()
    out = {}
    for folder, home, s in zip(folders, homes, samples):
        size = built(folder)["size"]
        out[size] = {"turn": percentiles(s), "floor": raw_floor(home, rounds)}
    return out


def catch_up(folder):
    stop = built(folder)["stop"]
    home = Home(Path(folder))
    reader = open_reader(home)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        projector = Projector(Path(tmp) / "rm.duckdb")
        start = time.perf_counter()
        applied = projector.catch_up(reader, stop=stop)
        projector.con.execute("CHECKPOINT")  # deferred by the projector: part of the work
        seconds = time.perf_counter() - start
        projector.close()
        # The reference: the first 100k rows read raw, then bulk-inserted as one Arrow table.
        start = time.perf_counter()
        rows = []
        for r in reader.rows(batch=20_000, stop=min(stop, 100_000)):
            rows.append(r)
        read_s = time.perf_counter() - start
        table = pa.Table.from_pylist(
            [
                {
                    "position": r.position, "time": None, "type": r.topic,
                    "aggregate_id": r.originator_id,
                    "aggregate_kind": (r.topic or "").split(".")[1], "version": r.version,
                    "hash": r.hash, "payload": (r.state or b"").decode(),
                }
                for r in rows
            ],
            ARROW["events"],
        )
        con = duckdb.connect(str(Path(tmp) / "raw.duckdb"))
        con.execute(f"CREATE TABLE events ({TABLES['events']})")
        con.register("batch", table)
        start = time.perf_counter()
        con.execute("INSERT INTO events SELECT * FROM batch")
        insert_s = time.perf_counter() - start
        con.close()
    reader.close()
    return {
        "events": applied,
        "catch_up_events_per_s": round(applied / seconds),
        "catch_up_seconds": round(seconds, 2),
        "raw_sqlite_read_rows_per_s": round(len(rows) / read_s),
        "raw_duckdb_insert_rows_per_s": round(len(rows) / insert_s),
    }


if job["do"] == "build":
    build(Path(job["folder"]), job["size"])
    print(json.dumps({"built": job["folder"]}))
elif job["do"] == "catch_up":  # in a process of its own, without litellm (as `mind project`)
    print(json.dumps(catch_up(job["catch_up"])))
else:
    result = {"turns": turns(job["folders"], job["turns"])}
    if job.get("catch_up"):
        result["catch_up"] = catch_up(job["catch_up"])
    print(json.dumps(result))
"""


def worker(tree: Path, job: dict[str, Any]) -> dict[str, Any]:
    """WORKER run in `tree` (`bench.common.run_in_tree`)."""
    return run_in_tree(tree, WORKER, job)


def build_all(trees: dict[str, Path], root: Path, sizes: list[int]) -> None:
    for side, tree in trees.items():
        for size in sizes:
            folder = root / side / f"n{size}"
            if (folder / "built.json").exists():
                continue
            start = time.perf_counter()
            worker(tree, {"do": "build", "folder": str(folder), "size": size})
            print(f"built {side} {size} in {time.perf_counter() - start:.0f} s", flush=True)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def table(runs: list[dict[str, Any]], sizes: list[int]) -> str:
    head = ["pair", "release", "load before/after"]
    for size in sizes:
        head += [f"{size:,} p50 ms", f"{size:,} floor p50 ms"]
    head += ["catch-up events/s", "raw SQLite read rows/s", "raw DuckDB insert rows/s"]
    head += ["fresh process catch-up events/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        cells = [str(r["pair"]), r["side"], f"{r['load_before']} / {r['load_after']}"]
        for size in sizes:
            t = r["turns"][str(size)]
            cells += [f"{t['turn']['p50_ms']:.1f}", f"{t['floor']['p50_ms']:.1f}"]
        c = r.get("catch_up") or {}
        for key in ("catch_up_events_per_s", "raw_sqlite_read_rows_per_s"):
            cells.append(f"{c[key]:,}" if key in c else "")
        cells.append(f"{c['raw_duckdb_insert_rows_per_s']:,}" if c else "")
        f = r.get("fresh_catch_up") or {}
        cells.append(f"{f['catch_up_events_per_s']:,}" if f else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratios(runs: list[dict[str, Any]], sizes: list[int]) -> dict[str, Any]:
    """Per pair this / previous, and their medians."""
    pairs: dict[int, dict[str, dict[str, Any]]] = {}
    for r in runs:
        pairs.setdefault(r["pair"], {})[r["side"]] = r
    figures: dict[str, list[float]] = {}

    def add(name: str, this: float, previous: float) -> None:
        figures.setdefault(name, []).append(round(this / previous, 3))

    for pair in pairs.values():
        if len(pair) < 2:
            continue
        this, previous = pair["this"], pair["previous"]
        for size in sizes:
            t, p = this["turns"][str(size)], previous["turns"][str(size)]
            add(f"turn_p50_{size}", t["turn"]["p50_ms"], p["turn"]["p50_ms"])
            add(f"floor_p50_{size}", t["floor"]["p50_ms"], p["floor"]["p50_ms"])
            add(
                f"turn_over_floor_{size}",
                t["turn"]["p50_ms"] / t["floor"]["p50_ms"],
                p["turn"]["p50_ms"] / p["floor"]["p50_ms"],
            )
        if this.get("catch_up") and previous.get("catch_up"):
            tc, pc = this["catch_up"], previous["catch_up"]
            add("catch_up", tc["catch_up_events_per_s"], pc["catch_up_events_per_s"])
            if this.get("fresh_catch_up") and previous.get("fresh_catch_up"):
                add(
                    "fresh_catch_up",
                    this["fresh_catch_up"]["catch_up_events_per_s"],
                    previous["fresh_catch_up"]["catch_up_events_per_s"],
                )
            add(
                "raw_duckdb_insert",
                tc["raw_duckdb_insert_rows_per_s"],
                pc["raw_duckdb_insert_rows_per_s"],
            )
    return {name: {"per_pair": v, "median": statistics.median(v)} for name, v in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", type=Path, required=True, help="the previous release's tree")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--catch-up", type=int, default=100_000, help="0: no catch-up")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--root", type=Path, default=Path("/tmp/mind-bench-encryption"))
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    trees = {"previous": args.base.resolve(), "this": REPO}
    sizes = sorted(set(args.sizes) | ({args.catch_up} if args.catch_up else set()))
    build_all(trees, args.root, sizes)
    if args.build_only:
        return
    runs = []
    for pair in range(1, args.pairs + 1):
        for side in SIDES:
            folder = args.root / side
            before = load()
            job = {
                "do": "run",
                "folders": [str(folder / f"n{s}") for s in args.sizes],
                "turns": args.turns,
                "offset": int(time.time()),  # distinct messages in every run
                "catch_up": str(folder / f"n{args.catch_up}") if args.catch_up else None,
            }
            result = worker(trees[side], job)
            if args.catch_up:
                result["fresh_catch_up"] = worker(trees[side], job | {"do": "catch_up"})
            run = {"pair": pair, "side": side, "load_before": before, "load_after": load()}
            runs.append(run | result)
            report("encryption", runs[-1])
    print(table(runs, args.sizes))
    summary = ratios(runs, args.sizes)
    for side in SIDES:
        mine = [r for r in runs if r["side"] == side]
        for size in args.sizes:
            summary[f"{side}_turn_p50_{size}_median"] = statistics.median(
                r["turns"][str(size)]["turn"]["p50_ms"] for r in mine
            )
        if args.catch_up:
            summary[f"{side}_catch_up_median"] = statistics.median(
                r["catch_up"]["catch_up_events_per_s"] for r in mine
            )
    report("encryption_summary", summary)


if __name__ == "__main__":
    main()
