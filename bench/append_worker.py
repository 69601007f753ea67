"""One side of the alternating append benchmark (bench/ledger.py), run as its own process.

`python bench/append_worker.py append|raw FOLDER`, with PYTHONPATH naming the tree to measure
(this one or a checkout of the previous release: only `bench.common.new_mind` and
`Mind.open_commitment` are used, which both have). Each line read from stdin is a count of
commands; the worker runs that many and prints the seconds they took.
"""

from __future__ import annotations

import sqlite3
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

# The size of a sealed `commitment.opened` state as the ledger stores it (~257 bytes), so the
# raw side writes as many bytes per row as the ledger's events table does.
STATE = b'{"c":"' + b"x" * 230 + b'","t":"2026-01-01T00:00:00Z"}'


def raw_inserter(folder: Path, pragmas: dict[str, str]) -> Callable[[int], None]:
    """Plain inserts into the ledger's events table shape, one transaction per row, with the
    pragmas the ledger's connection reports (journal mode, synchronous)."""
    con = sqlite3.connect(folder / "raw.sqlite", isolation_level=None)
    for name, value in pragmas.items():
        con.execute(f"PRAGMA {name}={value}")
    con.execute(
        "CREATE TABLE IF NOT EXISTS stored_events (originator_id TEXT, originator_version "
        "INTEGER, topic TEXT, state BLOB, PRIMARY KEY (originator_id, originator_version))"
    )

    def run(count: int) -> None:
        for _ in range(count):
            con.execute("BEGIN")
            con.execute(
                "INSERT INTO stored_events VALUES (?, 1, 'mind.commitment.opened', ?)",
                (uuid.uuid4().hex, STATE),
            )
            con.execute("COMMIT")

    return run


def ledger_pragmas(folder: Path) -> dict[str, str]:
    """journal_mode and synchronous as a ledger connection opened by the mind reports them."""
    from bench.common import new_mind

    app = new_mind(folder)
    with app.recorder.datastore.transaction(commit=False) as c:
        found = {}
        for name in ("journal_mode", "synchronous"):
            c.execute(f"PRAGMA {name}")
            found[name] = str(c.fetchone()[0])
    app.close()
    return found


def appender(folder: Path) -> Callable[[int], None]:
    """One `mind commit`-like command per event: `open_commitment`, each its own append."""
    from bench.common import new_mind

    app = new_mind(folder)
    done = 0

    def run(count: int) -> None:
        nonlocal done
        for i in range(done, done + count):
            app.open_commitment(f"bench promise {i}")
        done += count

    return run


def main() -> None:
    kind, folder = sys.argv[1], Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    run = (
        raw_inserter(folder, ledger_pragmas(folder / "probe"))
        if kind == "raw"
        else appender(folder)
    )
    run(3)  # warm: first connections, first keys, first anchor
    print("ready", flush=True)
    for line in sys.stdin:
        start = time.perf_counter()
        run(int(line))
        print(time.perf_counter() - start, flush=True)


if __name__ == "__main__":
    main()
