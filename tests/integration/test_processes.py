"""Real processes: concurrent writers never fork the chain; SIGKILL loses no acknowledged event."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
from mindledger.adapters.verification import verify_ledger
from mindledger.compose import Home, open_mind
from mindledger.ledger_reads import verify_home
from mindledger.projections.engine.readmodel import published_position
from tests.conftest import subprocess_env
from tests.integration.ledger_factory import sqlite_mind
from tests.integration.test_follower import start, wait_until

WRITER = [sys.executable, "-m", "tests.integration.writer"]


def verify(path: Path) -> tuple[bool, int]:
    reader = SQLiteLedgerReader(path)
    result = verify_ledger(reader)
    return result.ok, result.events


def test_two_concurrent_writers_never_fork_the_chain_or_lose_a_command(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=0)
    env = subprocess_env(tmp_path)
    cwd = Path(__file__).resolve().parents[2]

    procs = [
        subprocess.Popen(
            [*WRITER, str(tmp_path), tag, "500"],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("alpha", "beta")
    ]
    outputs = [p.communicate(timeout=300) for p in procs]

    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outputs]
    acked = [cid for out, _ in outputs for cid in out.split()]
    assert len(set(acked)) == 1000
    assert verify(tmp_path / "ledger.sqlite") == (True, 1001)
    anchored = verify_home(Home(tmp_path))  # the head anchor two writers kept is never ahead
    assert anchored.ok and {a.status for a in anchored.anchors} == {"ok"}  # head, read model
    app = open_mind(Home(tmp_path))
    assert all(not app.commitment(cid).closed for cid in acked)


def test_sigkill_mid_stream_keeps_every_acknowledged_command(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=0)
    proc = subprocess.Popen(
        [*WRITER, str(tmp_path), "crash", "100000"],
        env=subprocess_env(tmp_path),
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    acked = [proc.stdout.readline().strip() for _ in range(150)]

    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate(timeout=60)
    acked += rest.split()

    assert proc.returncode == -signal.SIGKILL
    ok, events = verify(tmp_path / "ledger.sqlite")
    assert ok and events >= 1 + len(acked)
    assert verify_home(Home(tmp_path)).ok  # an anchor is written only after its commit
    app = open_mind(Home(tmp_path))
    assert all(app.commitment(cid).text.startswith("crash promise") for cid in acked)
    con = sqlite3.connect(tmp_path / "ledger.sqlite")
    orphans = con.execute(
        "SELECT count(*) FROM stored_events WHERE rowid NOT IN "
        "(SELECT notification_id FROM ledger_chain)"
    ).fetchone()[0]
    assert orphans == 0


# With a follower the turns read published copies, which lag behind the ledger: a number
# counted from a read model was shared there.
@pytest.mark.parametrize("follower", [False, True])
def test_two_turn_processes_never_share_a_number_and_ratify_only_on_a_later_one(
    tmp_path: Path, follower: bool
) -> None:
    sqlite_mind(tmp_path, commands=0)
    env = subprocess_env(tmp_path)
    following = start(tmp_path, "project", "--follow") if follower else None
    if following is not None:
        published = tmp_path / "readmodel.published.duckdb"
        wait_until(lambda: published.exists() and published_position(published) > 0)
    cwd = Path(__file__).resolve().parents[2]
    writer = [sys.executable, "-m", "tests.integration.turn_writer", str(tmp_path)]

    procs = [
        subprocess.Popen(
            [*writer, tag, other, "20"],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag, other in (("Alpha", "Beta"), ("Beta", "Alpha"))
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    if following is not None:
        following.send_signal(signal.SIGTERM)
        following.communicate(timeout=30)

    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outputs]
    turns = [json.loads(line) for out, _ in outputs for line in out.splitlines()]
    assert sorted(t["seq"] for t in turns) == list(range(1, 41))
    proposed = {c.split()[1]: t["seq"] for t in turns for c in t["identity"] if "proposed" in c}
    adopted = {c.split()[1]: t["seq"] for t in turns for c in t["identity"] if "adopted" in c}
    assert set(proposed) == {"Alpha", "Beta"}
    assert adopted and all(seq > proposed[name] for name, seq in adopted.items())
    assert verify(tmp_path / "ledger.sqlite")[0]
