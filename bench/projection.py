"""Read-side benchmarks: catch-up rate vs a raw DuckDB bulk insert, replay wall time and peak RSS,
follow lag at a steady write rate, and query latency.

Run: .venv/bin/python -m bench.projection [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from bench.common import fill, new_mind, percentiles, report, timed
from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
from mindledger.compose import Home, open_reader
from mindledger.projections.engine.duckdb_files import sandboxed
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.readmodel import published_position
from mindledger.projections.engine.schema import ARROW, TABLES
from mindledger.projections.queries.analytics import run_query

REPO = Path(__file__).resolve().parent.parent


def raw_duckdb_rate(reader: SQLiteLedgerReader, folder: Path) -> float:
    """The physical limit here: the same event rows, already in memory, bulk-inserted at once."""
    rows = [
        {
            "position": r.position,
            "time": None,
            "type": r.topic,
            "aggregate_id": r.originator_id,
            "aggregate_kind": (r.topic or "").split(".")[1],
            "version": r.version,
            "hash": r.hash,
            "payload": (r.state or b"").decode(),
        }
        for r in reader.rows(batch=20_000)
    ]
    batch = pa.Table.from_pylist(rows, ARROW["events"])
    con = duckdb.connect(str(folder / "raw.duckdb"))
    con.execute(f"CREATE TABLE events ({TABLES['events']})")
    con.register("batch", batch)
    seconds, _ = timed(lambda: con.execute("INSERT INTO events SELECT * FROM batch"))
    con.close()
    return len(rows) / seconds


RAW_ROWS = (
    "SELECT c.position, c.hash, e.topic, e.originator_id, e.originator_version, e.state "
    "FROM ledger_chain c JOIN stored_events e ON e.rowid = c.notification_id "
    "WHERE c.position > ? ORDER BY c.position LIMIT ?"
)


def raw_pipeline_rate(folder: Path, batch: int = 25_000) -> float:
    """The catch-up's reference: a plain script doing the same physical work on the same rows.
    Read from SQLite in the projector's batches, each state decoded, each sealed field opened
    with AES-GCM (its key from one scan of the key store, as a catch-up's), Arrow columns built
    and inserted into DuckDB, a transaction per batch, a checkpoint at the end."""
    import base64

    import orjson
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    def run() -> int:
        with sqlite3.connect(folder / "keys.sqlite") as kc:
            keys = dict(kc.execute("SELECT id, key FROM keys").fetchall())
        src = sqlite3.connect(folder / "ledger.sqlite")
        con = duckdb.connect(str(folder / "raw-pipeline.duckdb"))
        con.execute(f"CREATE TABLE events ({TABLES['events']})")
        con.execute("CREATE TABLE texts (position BIGINT, field VARCHAR, text VARCHAR)")
        after = done = 0
        while chunk := src.execute(RAW_ROWS, (after, batch)).fetchall():
            cols: dict[str, list[object]] = {n: [] for n in ARROW["events"].names}
            texts: dict[str, list[object]] = {"position": [], "field": [], "text": []}
            for position, hash_, topic, oid, version, state in chunk:
                data = orjson.loads(state)
                for field, value in data.items():
                    if isinstance(value, dict) and "$sealed" in value:
                        raw = base64.b64decode(value["c"])
                        aad = f"{oid}/{version}/{topic}/{field}".encode()
                        key = AESGCM(keys[bytes.fromhex(value["$sealed"])])
                        texts["position"].append(position)
                        texts["field"].append(field)
                        texts["text"].append(orjson.loads(key.decrypt(raw[:12], raw[12:], aad)))
                for name, value in (
                    ("position", position),
                    ("time", datetime.fromisoformat(data["timestamp"])),
                    ("type", topic),
                    ("aggregate_id", oid),
                    ("aggregate_kind", topic.split(".")[1]),
                    ("version", version),
                    ("hash", hash_),
                    ("payload", state.decode()),
                ):
                    cols[name].append(value)
            con.execute("BEGIN TRANSACTION")
            for table, arrow in (
                ("events", pa.table(cols, schema=ARROW["events"])),
                ("texts", pa.table(texts)),
            ):
                con.register("batch", arrow)
                con.execute(f"INSERT INTO {table} SELECT * FROM batch")
                con.unregister("batch")
            con.execute("COMMIT")
            after, done = chunk[-1][0], done + len(chunk)
        con.execute("CHECKPOINT")
        con.close()
        src.close()
        return done

    seconds, done = timed(run)
    (folder / "raw-pipeline.duckdb").unlink()
    return done / seconds


def catch_up(folder: Path, size: int) -> dict[str, float]:
    app = new_mind(folder)
    fill_s, written = timed(lambda: fill(app, size))
    reader = open_reader(Home(folder))  # with the key store: sealed fields are opened
    projector = Projector(folder / "rm.duckdb")

    def run() -> int:
        applied = projector.catch_up(reader)
        # Checkpoints are deferred (projector.py); the final one is part of the work.
        projector.con.execute("CHECKPOINT")
        return applied

    seconds, applied = timed(run)
    projector.close()
    raw = raw_duckdb_rate(reader, folder)
    pipeline = raw_pipeline_rate(folder)
    rate = applied / seconds
    return {
        "events": applied,
        "fill_events_per_s": round(written / fill_s),
        "catch_up_events_per_s": round(rate),
        "catch_up_seconds": round(seconds, 2),
        "raw_pipeline_events_per_s": round(pipeline),
        "ratio_to_raw_pipeline": round(rate / pipeline, 3),
        "raw_duckdb_bulk_rows_per_s": round(raw),
        "ratio_to_raw": round(rate / raw, 3),
    }


REPLAY = """
import resource, sys, time
from pathlib import Path
from mindledger.compose import Home, open_reader
from mindledger.projections.engine.replay import rebuild
start = time.perf_counter()
n = rebuild(Path(sys.argv[2]), open_reader(Home(Path(sys.argv[1]))))
print(n, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


# The replay's reference, in a process of its own as well: the raw pipeline's time and peak RSS.
RAW_REPLAY = """
import resource, sys
from pathlib import Path
from bench.projection import raw_pipeline_rate
rate = raw_pipeline_rate(Path(sys.argv[1]))
print(rate, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def replay(folder: Path) -> dict[str, float]:
    def run(*args: str) -> list[str]:
        return subprocess.run(
            [sys.executable, "-c", *args], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.split()

    out = run(REPLAY, str(folder), str(folder / "replayed.duckdb"))
    (folder / "replayed.duckdb").unlink()
    raw = run(RAW_REPLAY, str(folder))
    raw_seconds = int(out[0]) / float(raw[0])
    return {
        "replay_events": int(out[0]),
        "replay_seconds": round(float(out[1]), 2),
        "replay_peak_rss_mb": round(int(out[2]) / 1024),
        "raw_pipeline_seconds": round(raw_seconds, 2),
        "raw_pipeline_peak_rss_mb": round(int(raw[1]) / 1024),
        "replay_time_to_raw": round(float(out[1]) / raw_seconds, 2),
        "replay_rss_to_raw": round(int(out[2]) / int(raw[1]), 2),
    }


def query_latency(folder: Path, runs: int = 30) -> dict[str, float]:
    con = sandboxed(folder / "rm.duckdb")  # as `mind query` opens it
    sql = "SELECT type, count(*) AS n FROM events GROUP BY type ORDER BY n DESC"
    samples = [timed(lambda: run_query(con, sql, {}))[0] for _ in range(runs)]
    con.close()
    return {"query_" + k: v for k, v in percentiles(samples).items()}


def follow_lag(folder: Path, rate: float = 50.0, seconds: float = 8.0) -> dict[str, float]:
    """Append commands at a steady rate while a follower runs; lag = write to visible."""
    app = new_mind(folder)
    home = Home(folder)
    env = dict(os.environ, MIND_HOME=str(folder))
    follower = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from mindledger.cli.main import main; main()",
            "project",
            "--follow",
        ],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    published = home.published
    while not published.exists():
        time.sleep(0.01)
    lags, pending = [], []
    next_write = time.perf_counter()
    end = next_write + seconds
    i = 0
    while time.perf_counter() < end or pending:
        now = time.perf_counter()
        if now >= next_write and now < end:
            app.open_commitment(f"steady promise {i}")
            pending.append((app.recorder.max_notification_id(), time.perf_counter()))
            i += 1
            next_write += 1 / rate
        seen = published_position(published)
        while pending and pending[0][0] <= seen:
            lags.append(time.perf_counter() - pending.pop(0)[1])
        time.sleep(0.002)
    follower.terminate()
    follower.wait(timeout=30)
    return {
        "follow_write_rate_per_s": rate,
        "follow_samples": len(lags),
        **{"follow_lag_" + k: v for k, v in percentiles(lags).items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for size in args.sizes:
            folder = root / f"n{size}"
            figures = catch_up(folder, size)
            figures |= query_latency(folder)
            if size == max(args.sizes):
                figures |= replay(folder)
            report("projection", figures)
        report("follow", follow_lag(root / "follow"))
    print(
        json.dumps(
            {"maxrss_mb_bench_process": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
        )
    )


if __name__ == "__main__":
    main()
