"""Ledger benchmarks: append throughput vs raw SQLite, verify rate at 100k, status cold start.

Run: .venv/bin/python -m bench.ledger [--commands 2000] [--verify-events 100000]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from bench.common import fill, new_mind, percentiles, report, timed
from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
from mindledger.adapters.verification import verify_ledger

REPO = Path(__file__).resolve().parent.parent


def append_throughput(folder: Path, commands: int) -> dict[str, float]:
    app = new_mind(folder)
    before = app.recorder.max_notification_id()
    seconds, _ = timed(lambda: [app.open_commitment(f"bench promise {i}") for i in range(commands)])
    events = app.recorder.max_notification_id() - before
    return {"commands_per_s": round(commands / seconds), "events_per_s": round(events / seconds)}


def raw_sqlite_rate(folder: Path, rows: int) -> float:
    """Plain inserts into the same kind of file, WAL, one transaction per event."""
    con = sqlite3.connect(folder / "raw.sqlite", isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(
        "CREATE TABLE t (originator_id TEXT, originator_version INTEGER, topic TEXT, "
        "state BLOB, PRIMARY KEY (originator_id, originator_version))"
    )
    state = b'{"text":"bench promise","origin":"owner","timestamp":"2026-01-01T00:00:00Z"}'

    def insert() -> None:
        for _ in range(rows):
            con.execute("BEGIN")
            con.execute(
                "INSERT INTO t VALUES (?, 1, 'mind.commitment.opened', ?)",
                (uuid.uuid4().hex, state),
            )
            con.execute("COMMIT")

    seconds, _ = timed(insert)
    return rows / seconds


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
    parser.add_argument("--verify-events", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        append = append_throughput(root / "append", args.commands)
        raw = raw_sqlite_rate(root, args.commands)
        report(
            "append",
            {
                **append,
                "raw_sqlite_inserts_per_s": round(raw),
                "events_ratio_to_raw": round(append["events_per_s"] / raw, 3),
            },
        )
        report("verify", verify_rate(root / "verify", args.verify_events))
        report("status", status_cold_start(root / "verify"))


if __name__ == "__main__":
    main()
