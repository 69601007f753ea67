"""A forget that could not finish: `mind log`, `mind verify` and `mind export` finish a forget a
crash interrupted, like every other command; a projector holding the read model stops a forget
before any key is destroyed, and a forget it stops later names a remedy that exists."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import Result, subprocess_env
from tests.e2e.forget_memories import (
    CANARIES,
    events_of,
    files_holding,
    ledger_head,
    stored_keys,
    turn,
)

Cli = Callable[..., Result]
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
FORGOTTEN = "mind.forget.forgotten"
CANARY = CANARIES["turn"]


@contextlib.contextmanager
def a_follower(home: Path) -> Iterator[None]:
    """`mind project --follow` running on the home (it holds the read model)."""
    process = subprocess.Popen(
        [*MIND, "project", "--follow"],
        env=subprocess_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        assert b"following" in process.stdout.readline()  # said before it takes the lock:
        deadline = time.monotonic() + 120
        while _read_model_free(home):  # wait until it holds the read model
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def _read_model_free(home: Path) -> bool:
    from mindledger.projections.engine.readmodel import projector_lock

    with projector_lock(home / "projector.lock", wait=False) as free:
        return bool(free)


def crashed_forget(cli: Cli, home: Path) -> None:
    """A turn holding the canary, projected, then a forget of it killed once its keys are gone."""
    told = turn(cli, f"My bank PIN is {CANARY} 0451", "I will not repeat it.")
    assert cli("commitments").exit_code == 0  # the read model holds the canary now
    env = subprocess_env(home, MIND_TEST_FORGET_CRASH="after-keys")
    killed = subprocess.run(
        [*MIND, "forget", "--turn", str(told["turn"]), "--yes"], env=env, capture_output=True
    )
    assert killed.returncode == -9, killed.stderr
    assert (home / "forget.pending").exists()
    assert [f for f in files_holding(home, CANARY) if f.startswith("readmodel")]


@pytest.mark.parametrize(
    "args",
    [
        ["log"],
        ["log", "--json", "--kind", "identity"],
        ["verify"],
        ["verify", "--json"],
        ["export", "{out}", "--format", "jsonl"],
        ["export", "{out}", "--format", "md"],
    ],
)
def test_log_verify_and_export_finish_a_forget_a_crash_interrupted(
    cli: Cli, mind_home: Path, tmp_path: Path, args: list[str]
) -> None:
    crashed_forget(cli, mind_home)
    out = tmp_path / "out"

    result = cli(*[a.format(out=out) for a in args])

    assert result.exit_code == 0, result.stderr
    assert not (mind_home / "forget.pending").exists()
    assert files_holding(mind_home, CANARY) == []
    assert len(events_of(cli, FORGOTTEN)) == 1
    if out.exists():
        assert files_holding(out, CANARY) == []


def test_a_forget_while_a_follower_holds_the_read_model_is_refused_before_any_key_goes(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.projections.engine import purge

    monkeypatch.setattr(purge, "LOCK_WAIT_S", 0.5)
    told = turn(cli, f"My bank PIN is {CANARY} 0451", "I will not repeat it.")
    keys, head = stored_keys(mind_home), ledger_head(mind_home)
    with a_follower(mind_home):
        result = cli("forget", "--turn", str(told["turn"]), "--yes")

    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "mind project --follow" in lines[0] and "nothing was forgotten" in lines[0]
    assert "--finish" not in lines[0]
    assert stored_keys(mind_home) == keys and ledger_head(mind_home) == head
    assert not (mind_home / "forget.pending").exists()


def test_a_forget_stopped_by_a_follower_after_its_keys_went_names_a_real_remedy(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.projections.engine import purge

    monkeypatch.setattr(purge, "LOCK_WAIT_S", 0.5)
    crashed_forget(cli, mind_home)
    with a_follower(mind_home):
        held = cli("commitments")
    finished = cli("commitments")

    assert held.exit_code == 1
    lines = held.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), held.stderr
    assert "stop `mind project --follow`" in lines[0] and "--finish" not in lines[0]
    assert finished.exit_code == 0, finished.stderr
    assert not (mind_home / "forget.pending").exists()
    assert files_holding(mind_home, CANARY) == []
