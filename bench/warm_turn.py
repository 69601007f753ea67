"""`mind turn` through a warm server against `python -c pass`, this tree and another (`--base`,
a worktree of the previous release) side by side: a server per tree, each on its own home set to
the scripted `mock` model, and in every round one `python -c pass` and one `mind turn` of each
tree, so all share the machine's load of that moment. Reported: the wall p50 of each, the
median of the per-round ratios to `python -c pass` (the figure the issue's goal reads: <= 3x)
and each client's CPU (the server's time is the rest of its wall time).
Run: PYTHONPATH=. .venv/bin/python -m bench.warm_turn [--rounds 12] [--base ../wt-base]
    [--vectors on|off]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import report
from bench.serve import base_env

REPO = Path(__file__).resolve().parent.parent
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = 0  # reaped here (for its usage), not by Popen
    if status != 0:
        raise RuntimeError(f"{cmd[3:]} failed in {cwd}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def serve(tree: Path, home: Path, env: dict[str, str], vectors: str) -> subprocess.Popen[str]:
    """A new mind at `home` served by `tree`'s code (ready when it printed its line)."""
    quiet = {**env, "MIND_NO_SERVER": "1"}
    for args in (
        ["init", "--name", home.name],
        ["model", "set", "mock"],
        ["config", "set", "embedding.recall", vectors],
    ):
        subprocess.run([*MIND, *args], env=quiet, cwd=tree, check=True, capture_output=True)
    server = subprocess.Popen(
        [*MIND, "serve", "--port", "0"],
        env=env,
        cwd=tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert server.stdout is not None
    server.stdout.readline()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--base", type=Path, help="the previous release's tree, measured too")
    parser.add_argument("--vectors", choices=("on", "off"), default="on")
    args = parser.parse_args()
    trees = {"this": REPO} | ({"base": args.base.resolve()} if args.base else {})
    # Bytecode cached, as an installed package has it; each tree's code first on the path
    # (`python -c` puts the working folder first, so each runs in its own tree).
    env = {k: v for k, v in base_env().items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    taken: dict[str, list[tuple[float, float]]] = {"pass": [], **{name: [] for name in trees}}
    with tempfile.TemporaryDirectory() as tmp:
        envs = {
            name: {**env, "PYTHONPATH": str(tree), "MIND_HOME": str(Path(tmp) / name)}
            for name, tree in trees.items()
        }
        servers = [serve(trees[n], Path(e["MIND_HOME"]), e, args.vectors) for n, e in envs.items()]
        try:
            for name, tree in trees.items():  # the first turns load the server's pipeline
                for i in range(3):
                    timed(
                        [*MIND, "turn", f"warm {i}", "--model", "mock", "--mock-reply", "ok"],
                        envs[name],
                        tree,
                    )
            for i in range(args.rounds):
                taken["pass"].append(timed([sys.executable, "-c", "pass"], env, Path(tmp)))
                for name, tree in trees.items():
                    turn = [*MIND, "turn", f"round {i}", "--model", "mock", "--mock-reply", "ok"]
                    taken[name].append(timed(turn, envs[name], tree))
        finally:
            for server in servers:
                os.killpg(server.pid, signal.SIGTERM)
            for server in servers:
                server.wait(60)
    bare = taken["pass"]
    figures: dict[str, object] = {
        "rounds": args.rounds,
        "vectors": args.vectors,
        "python_pass_p50_ms": round(statistics.median(w for w, _ in bare) * 1000, 1),
        "python_pass_cpu_p50_ms": round(statistics.median(c for _, c in bare) * 1000, 1),
    }
    for name in trees:
        runs = taken[name]
        prefix = "" if name == "this" else "base_"
        figures[prefix + "turn_p50_ms"] = round(statistics.median(w for w, _ in runs) * 1000, 1)
        figures[prefix + "client_cpu_p50_ms"] = round(
            statistics.median(c for _, c in runs) * 1000, 1
        )
        figures[prefix + "turn_to_pass"] = round(
            statistics.median(t[0] / p[0] for t, p in zip(runs, bare, strict=True)), 2
        )
    report("warm_turn", figures)


if __name__ == "__main__":
    main()
