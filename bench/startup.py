"""Start-up: whole `mind` processes (no server), each against `python -c pass` in the same run.

What a one-shot command costs is mostly what it imports; this measures the wall time a user
waits for each command named in issue 30, on a home made by `mind init` (the `mock` model) and,
for `mind status`, a 10k-event home. The commands take turns (one run of each, again) so the
machine's drift lands on every command alike; the figure is each one's median over `--runs`,
and its ratio to `python -c pass`, in wall time and in CPU time (user + system: steadier on a
busy machine). `mind mcp` is timed to its answer to `initialize`.
`--base DIR` runs each command by a previous release's tree as well, alternately.
Run: PYTHONPATH=. .venv/bin/python -m bench.startup [--runs 15] [--events 10000] [--base DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import fill, new_mind, report

REPO = Path(__file__).resolve().parent.parent
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
REPLY = "Noted.\nCOMMIT: send the weekly report on Friday"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def environment(home: Path, tree: Path = REPO) -> dict[str, str]:
    env = dict(os.environ, MIND_HOME=str(home), MIND_NO_SERVER="1", PYTHONPATH=str(tree))
    # Bytecode cached as an installed package has it: without, every run compiles our modules.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def small_home(folder: Path) -> Path:
    """`mind init` with the mock model, a commitment and a turn: something to list and recall."""
    home = folder / "small"
    env = environment(home)
    for args in (
        ["init", "--name", "Echo"],
        ["model", "set", "mock"],
        ["commit", "Send the weekly report on Friday"],
        ["turn", "--model", "mock", "--mock-reply", REPLY, "Remind me about the report"],
    ):
        subprocess.run([*MIND, *args], env=env, check=True, capture_output=True)
    return home


def large_home(folder: Path, events: int) -> Path:
    """A home of about `events` events, built in-process in batched saves, then projected."""
    home = folder / "large"
    fill(new_mind(home), events - 1)
    subprocess.run([*MIND, "project"], env=environment(home), check=True, capture_output=True)
    return home


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


Run = Callable[[], tuple[float, float]]


def process(argv: list[str], env: dict[str, str], tree: Path = REPO) -> Run:
    """A run of `argv` (`{n}` in it numbered per run) in `tree` (`python -c` puts the current
    folder first on the path, before PYTHONPATH): its wall and CPU seconds (user + system)."""
    runs = itertools.count()

    def run() -> tuple[float, float]:
        n = next(runs)
        cpu, start = children_cpu(), time.perf_counter()
        subprocess.run(
            [a.replace("{n}", str(n)) for a in argv],
            env=env,
            cwd=tree,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.perf_counter() - start, children_cpu() - cpu

    return run


def mcp_initialize(home: Path, tree: Path) -> Run:
    """Seconds from spawning `mind mcp` to its answer to `initialize` on stdout (wall; the CPU
    column is the whole process's, to its exit)."""

    def run() -> tuple[float, float]:
        cpu, start = children_cpu(), time.perf_counter()
        child = subprocess.Popen(
            [*MIND, "mcp"],
            env=environment(home, tree),
            cwd=tree,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        child.stdin.flush()
        answer = json.loads(child.stdout.readline())
        took = time.perf_counter() - start
        assert answer.get("id") == 1, answer
        child.stdin.close()
        child.wait(timeout=30)
        return took, children_cpu() - cpu

    return run


def commands(
    tree: Path, small: Path, writes: Path, large: Path, events: int, mcp: bool
) -> dict[str, Run]:
    """Each command of the figure, run by the code in `tree`. The turn and the commit write to
    `writes`, a copy of `small`: the listings then read a home nobody wrote to since their last
    run, so they measure a listing, not the catch-up of the events written between runs."""
    env, written = environment(small, tree), environment(writes, tree)
    cases = {
        "mind --help": process([*MIND, "--help"], env, tree),
        "mind commitments": process([*MIND, "commitments"], env, tree),
        f"mind status ({events // 1000}k events)": process(
            [*MIND, "status"], environment(large, tree), tree
        ),
        "mind recall Q --no-server": process([*MIND, "recall", "report", "--no-server"], env, tree),
        "mind turn --model mock --no-server": process(
            [*MIND, "turn", "--model", "mock", "--mock-reply", REPLY, "--no-server", "Hi"],
            written,
            tree,
        ),
        "mind commit": process(
            [*MIND, "commit", f"Water the plants {tree.name} {{n}}"], written, tree
        ),
    }
    if mcp:
        cases["mind mcp (initialize)"] = mcp_initialize(small, tree)
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--no-mcp", action="store_true", help="skip `mind mcp` (initialize)")
    parser.add_argument(
        "--base", type=Path, help="a previous release's tree: each command run by it too, in turn"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, large = small_home(Path(tmp)), large_home(Path(tmp), args.events)
        writes = Path(shutil.copytree(small, Path(tmp) / "writes"))
        cases: dict[str, Run] = {
            "python -c pass": process([sys.executable, "-c", "pass"], environment(small))
        }
        this = commands(REPO, small, writes, large, args.events, not args.no_mcp)
        base = (
            {}
            if args.base is None
            else commands(args.base.resolve(), small, writes, large, args.events, not args.no_mcp)
        )
        for name, run in this.items():
            cases[name] = run
            if name in base:
                cases[f"{name} [base]"] = base[name]
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, run in cases.items():
                samples[name].append(run())
    # CPU seconds as well as wall: on a busy machine the wall ratio mostly measures the others.
    wall0 = statistics.median(w for w, _ in samples["python -c pass"])
    cpu0 = statistics.median(c for _, c in samples["python -c pass"])
    figures = {}
    print(f"{'':42} {'wall p50':>10} {'x pass':>7} {'CPU p50':>10} {'x pass':>7}")
    for name, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        figures[name] = {
            "p50_ms": round(wall * 1000, 1),
            "x_pass": round(wall / wall0, 1),
            "cpu_p50_ms": round(cpu * 1000, 1),
            "cpu_x_pass": round(cpu / cpu0, 1),
        }
        print(
            f"{name:42} {wall * 1000:7.1f} ms {wall / wall0:6.1f}x "
            f"{cpu * 1000:7.1f} ms {cpu / cpu0:6.1f}x",
            flush=True,
        )
    report("startup", {"runs": args.runs, "events": args.events, "figures": figures})


if __name__ == "__main__":
    main()
