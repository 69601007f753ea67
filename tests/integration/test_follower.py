"""The projector as its own process: SIGKILL at any moment loses and duplicates nothing, and
readers see their own writes while it runs."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from mindledger.compose import Home, open_reader
from mindledger.projections.engine.readmodel import published_position
from mindledger.projections.engine.replay import differences, rebuild
from tests.conftest import REPO, subprocess_env
from tests.integration.ledger_factory import sqlite_mind

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
WRITER = [sys.executable, "-m", "tests.integration.writer"]


def start(home: Path, *args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*MIND, *args],
        env=subprocess_env(home),
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )  # type: ignore[call-overload]


def wait_until(condition: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_sigkilled_followers_neither_lose_nor_duplicate_events(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=2)
    writer = subprocess.Popen(
        [*WRITER, str(tmp_path), "load", "400"],
        cwd=REPO,
        env=subprocess_env(tmp_path),
        stdout=subprocess.DEVNULL,
    )
    rng = random.Random(7)
    kills = 0
    while writer.poll() is None or kills < 3:
        follower = start(tmp_path, "project", "--follow")
        time.sleep(rng.uniform(0.2, 0.8))
        follower.send_signal(signal.SIGKILL)
        follower.communicate(timeout=30)
        kills += 1
    assert writer.wait(timeout=120) == 0

    done = subprocess.run(
        [*MIND, "project", "--json"],
        env=subprocess_env(tmp_path),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    reader = open_reader(Home(tmp_path))
    head = reader.head()[0]
    assert json.loads(done.stdout)["position"] == head
    rebuild(tmp_path / "replayed.duckdb", reader)
    assert differences(tmp_path / "readmodel.published.duckdb", tmp_path / "replayed.duckdb") == []


def test_a_follower_stops_cleanly_on_sigterm_and_readers_see_their_writes(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=1)
    follower = start(tmp_path, "project", "--follow")
    published = tmp_path / "readmodel.published.duckdb"
    wait_until(lambda: published.exists() and published_position(published) > 0)

    committed = subprocess.run(
        [*MIND, "commit", "Read my own write"],
        env=subprocess_env(tmp_path),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    listed = subprocess.run(
        [*MIND, "commitments", "--json"],
        env=subprocess_env(tmp_path),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    follower.send_signal(signal.SIGTERM)
    out, err = follower.communicate(timeout=30)

    assert committed.returncode == 0
    assert "Read my own write" in [c["text"] for c in json.loads(listed.stdout)]
    assert follower.returncode == 0, err
    assert "following the ledger" in out


def test_a_second_follower_is_refused_clearly(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=1)
    first = start(tmp_path, "project", "--follow")
    published = tmp_path / "readmodel.published.duckdb"
    wait_until(lambda: published.exists())

    second = subprocess.run(
        [*MIND, "project", "--follow"],
        env=subprocess_env(tmp_path),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=30)

    assert second.returncode == 1
    assert second.stderr.strip() == (
        "Error: another projector is already following this mind; stop it first"
    )
