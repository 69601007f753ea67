"""`mind mcp` start-up: milliseconds from spawning `mind mcp --home HOME` to its answer to the
MCP `initialize` request on stdout (what an agent waits for before its first call), the median
of N runs, beside the same figure for `python -c pass` (the interpreter alone) on this machine;
and the CPU seconds of each whole `mind mcp` process (start, initialize, close), which a busy
machine inflates less than the wall clock.
With `--base TREE` (a worktree of the previous release) that tree's `mind mcp` is measured
too, the two taking turns, so both figures share the machine's load.
Run: PYTHONPATH=. .venv/bin/python -m bench.mcp_start [--runs 10] [--base ../wt-base]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import report
from bench.serve import MIND, base_env, mind

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def initialize_s(home: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawning `mind mcp` to the first line it answers `initialize` with, and
    the CPU seconds (user + system) of the whole process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [*MIND, "mcp", "--home", str(home)],
        env=env,
        cwd=env.get("PYTHONPATH"),  # `python -c` and `-m` put the working folder first
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE) + "\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    took = time.perf_counter() - started
    if answer.get("id") != 1 or "result" not in answer:
        raise RuntimeError(f"mind mcp did not initialize: {answer}")
    process.stdin.close()  # the client goes away: the server ends
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0  # reaped here (for its usage), not by Popen
    process.stdout.close()
    return took, usage.ru_utime + usage.ru_stime


def bare_python_s() -> float:
    """Seconds for `python -c pass` (the floor under any Python command's start-up)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--base", type=Path, help="the previous release's tree, measured too")
    args = parser.parse_args()
    runs = args.runs
    # Bytecode cached, as an installed package has it (a first run writes it).
    env = {k: v for k, v in base_env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    trees = {"this": {**env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}}
    if args.base is not None:
        trees["base"] = {**env, "PYTHONPATH": str(args.base.resolve())}
    starts: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    bare = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "mind"
        mind(["--home", str(home), "init", "--name", "Bench"], {**env, "MIND_NO_SERVER": "1"})
        for tree_env in trees.values():
            initialize_s(home, tree_env)  # warm the page cache and the bytecode
        for _ in range(runs):
            bare.append(bare_python_s())
            for name, tree_env in trees.items():
                starts[name].append(initialize_s(home, tree_env))
    figures: dict[str, object] = {"runs": runs}
    for name, taken in starts.items():
        prefix = "" if name == "this" else "base_"
        figures[prefix + "initialize_p50_ms"] = round(
            statistics.median(s for s, _ in taken) * 1000, 1
        )
        figures[prefix + "cpu_p50_ms"] = round(statistics.median(c for _, c in taken) * 1000, 1)
    figures["python_pass_p50_ms"] = round(statistics.median(bare) * 1000, 1)
    report("mcp_start", figures)


if __name__ == "__main__":
    main()
