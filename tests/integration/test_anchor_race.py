"""Writers racing on one head anchor: it only moves forward, is never half written, and ends
at the ledger's head."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mindledger.adapters.head_anchor import HeadAnchorFile
from mindledger.compose import Home, open_reader
from tests.conftest import subprocess_env
from tests.integration.ledger_factory import sqlite_mind

REPO = Path(__file__).resolve().parents[2]
WRITER = [sys.executable, "-m", "tests.integration.writer"]
RACER = """
import sys
from pathlib import Path
from mindledger.adapters.head_anchor import HeadAnchorFile
anchor, first, step, last = HeadAnchorFile(Path(sys.argv[1])), *map(int, sys.argv[2:])
for position in range(first, last + 1, step):
    anchor.advance("ledger-a", position, format(position, "064x"))
"""


def test_racing_writers_move_the_anchor_only_forward_and_never_leave_half_a_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger-head.json"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(path), str(first), "4", "400"],
            cwd=REPO,
            env=subprocess_env(tmp_path),
        )
        for first in (1, 2, 3, 4)
    ]

    seen: list[int] = []
    while any(r.poll() is None for r in racers):
        kept = HeadAnchorFile(path).read()  # raises if a read caught half a record
        if kept is not None:
            assert kept.hash == format(kept.position or 0, "064x")
            seen.append(kept.position or 0)

    assert [r.wait() for r in racers] == [0, 0, 0, 0]
    assert seen == sorted(seen)
    final = HeadAnchorFile(path).read()
    assert final is not None and (final.position, final.hash) == (400, format(400, "064x"))


def test_three_writer_processes_leave_the_anchor_at_the_ledgers_head(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=0)

    writers = [
        subprocess.Popen(
            [*WRITER, str(tmp_path), tag, "120"],
            cwd=REPO,
            env=subprocess_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("alpha", "beta", "gamma")
    ]
    outputs = [w.communicate(timeout=300) for w in writers]

    assert [w.returncode for w in writers] == [0, 0, 0], [err[-2000:] for _, err in outputs]
    head = open_reader(Home(tmp_path)).head()
    kept = HeadAnchorFile(tmp_path / "ledger-head.json").read()
    assert kept is not None and (kept.position, kept.hash) == (361, head[1])
    assert head[0] == 361
