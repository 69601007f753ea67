"""A forget waits for the turns under way in other processes (a turn's prompt, which may quote
what the forget names, is written only as the turn ends), and a turn waits for a forget."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from mindledger.compose import Home
from mindledger.forget import LOCK, _forget_lock
from mindledger.forget_lock import forget_excluded
from tests.e2e.forget_memories import stored_keys
from tests.e2e.server_processes import MIND, client_env, init_mind, run_mind

WAIT_S = 120


def blocked_on_a_lock(pid: int) -> bool:
    """Whether `pid` waits for a file lock (a `->` line of /proc/locks names it)."""
    lines = Path("/proc/locks").read_text().splitlines()
    return any("->" in line and f" {pid} " in line for line in lines)


def wait_until_blocked(process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not blocked_on_a_lock(process.pid):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the process never waited for the lock"
        time.sleep(0.02)


def start(home: Path, *args: str) -> subprocess.Popen[str]:
    env = client_env(home, MIND_NO_SERVER="1")
    return subprocess.Popen([*MIND, *args], env=env, stdout=subprocess.PIPE, text=True)


def test_a_forget_waits_for_a_turn_under_way(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    init_mind(home)
    said = run_mind(
        ["turn", "the Zqxwait code", "--model", "mock", "--mock-reply", "ok", "--json"],
        client_env(home, MIND_NO_SERVER="1"),
    )
    turn = said.json()["turn"]
    keys = stored_keys(home)

    with forget_excluded(Home(home)):  # a turn under way in another process
        forget = start(home, "forget", "--turn", turn, "--yes")
        wait_until_blocked(forget)
        assert stored_keys(home) == keys
    forget.communicate(timeout=WAIT_S)

    assert forget.returncode == 0
    assert stored_keys(home) < keys


def test_a_turn_waits_for_a_forget_under_way(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    init_mind(home)

    with _forget_lock(Home(home)):  # a forget under way in another process
        turn = start(home, "turn", "hello", "--model", "mock", "--mock-reply", "hi", "--json")
        wait_until_blocked(turn)
    out, _ = turn.communicate(timeout=WAIT_S)

    assert turn.returncode == 0
    assert '"reply": "hi"' in out
    assert (home / LOCK).exists()
