"""The soak's CI smoke: one minute of mixed load on a served mind (`python -m bench.soak
--smoke`): every acknowledged turn recorded once, the ledger verifies, no request failed, and the
server's open files stay flat. Memory and p95 are the full soak's figures (BENCHMARKS.md), not a
test's: one noisy minute on a shared machine says nothing about them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_minute_of_mixed_load_keeps_every_turn_and_no_file_leaks(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # 20 s of warm-up: the first asks load the embedding model (~350 MB), which is not a leak.
    args = ["--seconds", "60", "--warmup", "20", "--clients", "2", "--smoke", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "bench.soak", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    # The figures first: a failure shows them (the open files' counts and, when they grew, the
    # server's files by name), not only the line that says which promise did not hold.
    assert out.exists(), done.stderr[-2000:]
    figures = json.loads(out.read_text())
    files = {k: v for k, v in figures.items() if k.startswith("open_files")}
    assert done.returncode == 0, f"{done.stderr[-500:]}\n{json.dumps(files, indent=1)}"
    assert figures["failed"] == 0, figures["failures"]
    assert all(figures["ledger"].values()), figures["ledger"]
    assert figures["ledger"]["turns_recorded"] >= sum(
        n for op, n in figures["ops"].items() if op == "turn"
    )
    assert figures["holds"]["open_files_flat"], figures
    assert set(figures["ops"]) == {"turn", "recall", "ask", "remember_forget"}
