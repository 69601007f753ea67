"""Whole `mind` processes with the home's server warm, against the same commands in-process.

Measured in one run, interleaved (one of each variant per round: these machines drift): `mind
turn --model mock --mock-reply ...` and `mind recall Q` through the server (the fast path) and
with `--no-server`, `python -c pass`, and the same turn and recall as use cases inside one
warm process (`cli.turn_cmds`/`cli.recall_cmds`' work without the process around it).
Prints a table and writes bench/out/serve.json.
Run: .venv/bin/python -m bench.serve [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.common import percentiles

OUT = Path(__file__).resolve().parent / "out"
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
REPLY = "Noted.\nCOMMIT: follow up on bench item"


def base_env() -> dict[str, str]:
    """The environment every process of a run shares (the server's too, so its settings
    fingerprint matches the clients')."""
    env = {k: v for k, v in os.environ.items() if k not in ("MIND_NO_SERVER", "MIND_NOW")}
    env["LITELLM_OFFLINE_MODE"] = "true"
    return env


def mind(args: Sequence[str], env: Mapping[str, str], check: bool = True) -> str:
    """Run `mind ARGS` in this process with exactly `env` as its environment; its stdout.
    Setting a mind up and checking it afterwards are not what is measured: a process for each
    (a mock turn's process imports LiteLLM) made a bench's set-up most of its time."""
    from click.testing import CliRunner

    from mindledger.cli.main import mind as command

    exact = {k: None for k in os.environ if k not in env} | dict(env)
    done = CliRunner().invoke(command, list(args), env=exact)
    if check and done.exit_code != 0:
        why = done.stderr.strip() or repr(done.exception)
        raise RuntimeError(f"mind {' '.join(args)} failed: {why}")
    return done.stdout


def init_home(folder: Path, name: str, env: Mapping[str, str], turns: int = 5) -> Path:
    """A new mind with a few turns in it, made in this process."""
    quiet = {**env, "MIND_NO_SERVER": "1"}
    mind(["--home", str(folder), "init", "--name", name], quiet)
    for i in range(turns):
        mind(
            [
                "--home",
                str(folder),
                "turn",
                f"seed {i}",
                "--model",
                "mock",
                "--mock-reply",
                f"{REPLY} {i}",
            ],
            quiet,
        )
    return folder


def start_server(
    homes: Sequence[Path], env: Mapping[str, str], log: Path, extra: Sequence[str] = ()
) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """`mind serve` for `homes` on a free port; returns it and its server.json once ready."""
    args = [*MIND, "serve", "--port", "0", *extra]
    for home in homes:
        args += ["--home", str(home)]
    with open(log, "ab") as out:
        proc = subprocess.Popen(args, env=dict(env), stdout=out, stderr=out, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        infos = [_info(h) for h in homes]
        if all(i is not None and i.get("pid") == proc.pid for i in infos):
            assert infos[0] is not None
            return proc, infos[0]
        if proc.poll() is not None:
            raise RuntimeError(f"mind serve exited with {proc.returncode}; see {log}")
        time.sleep(0.1)
    stop_server(proc)
    raise RuntimeError(f"mind serve was not ready in 120 s; see {log}")


def _info(home: Path) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads((home / "server.json").read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError):
        return None


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 30 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def served_requests(home: Path) -> int:
    """Request lines in the home's server log (to check the fast path was taken)."""
    total = 0
    for path in (home / "logs").glob("server.log*"):
        with open(path, encoding="utf-8", errors="replace") as f:
            total += sum(1 for line in f if "/v1/minds/" in line)
    return total


def in_process_use_cases(home: Path, runs: int) -> dict[str, list[float]]:
    """The turn and the recall as use cases in this (warm) process, with their JSON made as
    the commands make it: what a process costs beyond them is start-up and printing."""
    os.environ["MIND_NO_SERVER"] = "1"
    from mindledger.compose import Home, build_model, turn_service
    from mindledger.recall import recall_data
    from mindledger.turns import outcome_json

    h = Home(home)
    model = build_model(h, "mock", REPLY, None)
    turns, recalls = [], []
    for i in range(runs + 1):
        start = time.perf_counter()
        with turn_service(h) as service:
            outcome = service.run(f"in-process bench {i}", model, budget=2000)
        outcome_json(h, outcome)
        turns.append(time.perf_counter() - start)
        start = time.perf_counter()
        recall_data(h, "follow up bench item", 2000)
        recalls.append(time.perf_counter() - start)
    return {"turn (use case)": turns[1:], "recall (use case)": recalls[1:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    env = base_env()
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    home = init_home(folder / "m", "Bench", env)
    proc, info = start_server([home], env, folder / "serve.log")
    h = ["--home", str(home)]
    variants: dict[str, list[str]] = {
        "turn via server": [
            *MIND,
            *h,
            "turn",
            "bench {i}",
            "--model",
            "mock",
            "--mock-reply",
            REPLY,
        ],
        "turn --no-server": [
            *MIND,
            *h,
            "turn",
            "bench {i}",
            "--model",
            "mock",
            "--mock-reply",
            REPLY,
            "--no-server",
        ],
        "recall via server": [*MIND, *h, "recall", "follow up bench item"],
        "recall --no-server": [*MIND, *h, "recall", "follow up bench item", "--no-server"],
        "python -c pass": [sys.executable, "-c", "pass"],
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    try:
        before = served_requests(home)
        for i in range(runs + 1):  # round 0 warms the disk cache and the server
            for name, args in variants.items():
                start = time.perf_counter()
                done = subprocess.run([a.format(i=i) for a in args], env=env, capture_output=True)
                took = time.perf_counter() - start
                if done.returncode != 0:
                    raise RuntimeError(f"{name} failed: {done.stderr.decode()}")
                if i > 0:
                    samples[name].append(took)
        served = served_requests(home) - before
        samples |= in_process_use_cases(home, runs)
    finally:
        stop_server(proc)
    figures = {name: percentiles(values) for name, values in samples.items()}
    result = {
        "runs": runs,
        "server_version": info.get("version"),
        "requests_the_server_logged": served,
        "expected_via_server": 2 * (runs + 1),
        "figures": figures,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "serve.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{'what':<22}{'p50 ms':>10}{'p95 ms':>10}")
    for name, f in figures.items():
        print(f"{name:<22}{f['p50_ms']:>10.1f}{f['p95_ms']:>10.1f}")
    print(f"server requests logged: {served} (expected {2 * (runs + 1)} via the server)")


if __name__ == "__main__":
    main()
