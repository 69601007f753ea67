"""Read your own writes through a real `mind serve`: many clients at once each write and at once
act on the id the write returned, through HTTP and the `mind` command mixed (an HTTP write then a
CLI action, and the reverse), while a follower projector that publishes slowly holds the
projector lock, so every read model lags the ledger unless a read waits for the write. Zero
misses. Then, with the follower stopped, a full turn id still resolves: from the ledger.

The follower is slowed by a sitecustomize on its own PYTHONPATH (tests/service/slow_publish/),
not by any product setting. MIND_TEST_RYW_PAIRS sets the pairs per client (default 3; the
issue's figure is 8 clients x 200 pairs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mindledger.compose import Home, read_model_paths
from mindledger.projections.engine.readmodel import projector_lock
from tests.conftest import REPO, subprocess_env
from tests.service.serving import MIND, Server, init_home, run_mind, start_server

CLIENTS = 8
PAIRS = int(os.environ.get("MIND_TEST_RYW_PAIRS", "3"))
SLOW = Path(__file__).parent / "slow_publish"
M = "/v1/minds/Echo"


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    return init_home(tmp_path / "echo", "Echo")


@pytest.fixture()
def follower(home: Path) -> Iterator[subprocess.Popen[str]]:
    """`mind project --follow`, publishing slowly, holding the projector lock."""
    env = subprocess_env(home, PYTHONPATH=f"{SLOW}{os.pathsep}{REPO}")
    process = subprocess.Popen(
        [*MIND, "project", "--follow"],
        env=env,
        cwd=REPO,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    paths = read_model_paths(Home(home))
    deadline = time.monotonic() + 180
    while not (paths.published.exists() and lock_held(paths.lock)):
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the follower did not start"
        time.sleep(0.05)
    try:
        yield process
    finally:
        process.send_signal(signal.SIGCONT)
        process.terminate()
        process.wait(timeout=60)
        if process.stderr:
            process.stderr.close()


@pytest.fixture()
def server(home: Path, follower: subprocess.Popen[str]) -> Iterator[Server]:
    running = start_server([home])
    try:
        yield running
    finally:
        running.kill()


def lock_held(lock: Path) -> bool:
    with projector_lock(lock, wait=False) as free:
        return not free


def http(server: Server, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    reply = server.request(method, path, body)
    return reply.status, reply.json()


def cli(home: Path, *args: str) -> tuple[int, Any]:
    ran = run_mind(home, *args, "--json")
    return ran.returncode, (ran.stdout if ran.returncode else json.loads(ran.stdout))


def pair(server: Server, home: Path, client: int, k: int) -> str | None:
    """One write and the action on its id at once; a description of the miss, or None."""
    tag = f"c{client}k{k}{uuid.uuid4().hex[:6]}"
    kind = k % 7
    if kind in (0, 3):  # an HTTP turn, then approve it (HTTP) or show its prompt (CLI)
        body = {"text": f"Question {tag}?", "model": "mock", "mock_reply": f"Answer {tag}."}
        status, made = http(server, "POST", f"{M}/turns", body)
        if status != 200:
            return f"turn {status} {made}"
        ref = made["turn"][:8]
        if kind == 0:
            status, acted = http(server, "POST", f"{M}/turns/{ref}/approve", {})
        else:
            status, acted = cli(home, "log", "--turn", ref)
        return None if status == 0 or status == 200 else f"turn {ref}: {status} {acted}"
    if kind in (1, 2):  # a capture (HTTP or CLI), then verify it by its id (HTTP)
        if kind == 1:
            status, made = http(server, "POST", f"{M}/knowledge", {"text": tag, "question": tag})
        else:
            status, made = cli(home, "remember", tag, "--question", f"About {tag}?")
        if status not in (0, 200):
            return f"remember {status} {made}"
        status, acted = http(server, "POST", f"{M}/knowledge/{made['id']}/verify", {})
        return None if status == 200 else f"item {made['id']}: {status} {acted}"
    if kind == 4:  # CLI writes, HTTP reads of the id: a commitment, a thread, a concept
        status, made = cli(home, "commit", f"Promise {tag}")
        key, value, listing = "cid", made.get("cid") if status == 0 else None, "commitments"
    elif kind == 5:
        status, made = cli(home, "thread", "open", f"Why {tag}?", "--content", f"About {tag}.")
        key, value, listing = "id", made.get("id") if status == 0 else None, "threads"
    else:
        status, made = cli(home, "concept", "define", f"topic.{tag}", f"The {tag}.")
        key, value, listing = "token", made.get("token") if status == 0 else None, "concepts"
    if value is None:
        return f"{listing} write {status} {made}"
    listed = http(server, "GET", f"{M}/{listing}")[1]
    return None if [c for c in listed if c[key] == value] else f"{listing}: {value} not listed"


def client_run(server: Server, home: Path, client: int) -> list[str]:
    return [m for k in range(PAIRS) if (m := pair(server, home, client, k + client)) is not None]


def test_every_id_a_write_returns_is_usable_by_the_next_request_on_any_front_end(
    server: Server, home: Path, follower: subprocess.Popen[str]
) -> None:
    with ThreadPoolExecutor(CLIENTS) as pool:
        misses = [
            m
            for found in pool.map(lambda c: client_run(server, home, c), range(CLIENTS))
            for m in found
        ]

    assert misses == []


def test_a_full_turn_id_resolves_from_the_ledger_while_the_projector_is_stopped(
    server: Server, home: Path, follower: subprocess.Popen[str]
) -> None:
    body = {"text": "What colour is the shed?", "model": "mock", "mock_reply": "Blue."}
    status, made = http(server, "POST", f"{M}/turns", body)
    assert status == 200, made
    follower.send_signal(signal.SIGSTOP)  # it holds the lock: no read model can catch up now

    shown = http(server, "GET", f"{M}/log?turn={made['turn']}")
    approved = http(server, "POST", f"{M}/turns/{made['turn']}/approve", {})

    assert (shown[0], shown[1]["status"]) == (200, "complete")
    assert approved[0] == 200, approved
    assert approved[1]["state"] == "verified"
