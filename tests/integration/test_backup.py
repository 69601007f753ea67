"""`mind backup` while another process records turns: the copy (ledger and key store from one
instant) verifies and opens as a working mind, whether the writer goes on or is killed mid-copy."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mindledger.adapters import sqlite_backup
from mindledger.backup import backup_home
from mindledger.cli.main import mind
from mindledger.compose import Home
from tests.conftest import subprocess_env

WRITER = [sys.executable, "-m", "tests.integration.turn_writer"]
REPO = Path(__file__).resolve().parents[2]
DEADLINE = 300.0  # seconds a condition may take on a loaded machine before the test fails


class TurnWriter:
    """A process recording mock turns; its acknowledged turns arrive on `acked`."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [*WRITER, str(home), "Writer", "Other", "100000"],
            env=subprocess_env(home),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.acked: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.acked.put(json.loads(line))

    def next_turn(self) -> dict[str, Any]:
        """The next turn it acknowledges (fails the test after DEADLINE)."""
        return self.acked.get(timeout=DEADLINE)

    def drain(self) -> None:
        """Drop the turns acknowledged so far (done before now)."""
        while True:
            try:
                self.acked.get_nowait()
            except queue.Empty:
                return

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(timeout=DEADLINE)


@contextmanager
def turn_writer(home: Path) -> Iterator[TurnWriter]:
    writer = TurnWriter(home)
    try:
        writer.next_turn()  # it is writing before the backup starts
        yield writer
    finally:
        if writer.proc.poll() is None:
            writer.stop(signal.SIGKILL)


@contextmanager
def _bar(on_update: Any) -> Iterator[Any]:
    class Bar:
        def update(self, n: int) -> None:
            on_update(n)

    yield Bar()


def _cli(dest: Path, *args: str) -> Any:
    result = CliRunner().invoke(mind, ["--home", str(dest), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout) if "--json" in args else result.stdout


def _opens_as_a_working_mind(dest: Path, events: int) -> None:
    verified = _cli(dest, "verify", "--json")
    assert verified["ok"] and verified["events"] == events
    assert _cli(dest, "commitments", "--json") == []
    assert "Writer message" in _cli(dest, "recall", "Writer message")
    turn = _cli(dest, "turn", "Still here?", "--model", "mock", "--mock-reply", "Yes.", "--json")
    assert turn["reply"] == "Yes."
    assert _cli(dest, "verify", "--json")["ok"]


@pytest.fixture
def live_home(cli: Any, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An initialised mind whose turns are recorded at the system's time (the writer's)."""
    monkeypatch.delenv("MIND_NOW")
    assert cli("init", "--name", "Echo").exit_code == 0
    return home


def test_a_backup_while_turns_are_recorded_verifies_and_opens_as_a_working_mind(
    live_home: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "backup"
    during: list[dict[str, Any]] = []

    def wait_for_a_turn(_: int) -> None:
        if not during:  # a turn lands after the ledger's snapshot, before the keys are copied
            writer.drain()
            during.append(writer.next_turn())

    with turn_writer(live_home) as writer:
        done = backup_home(Home(live_home), dest, lambda total, label: _bar(wait_for_a_turn))
        writer.next_turn()  # and it goes on writing afterwards
        writer.stop()

    assert during and done["verified"]
    assert sorted(p.name for p in dest.iterdir()) == [
        "keys.sqlite",
        "ledger-head.json",
        "ledger.sqlite",
    ]
    assert dest.stat().st_mode & 0o777 == 0o700
    assert {p.stat().st_mode & 0o777 for p in dest.iterdir()} == {0o600}
    home_events = _cli(live_home, "verify", "--json")["events"]
    assert done["events"] < home_events  # the copy is the instant it was taken
    _opens_as_a_working_mind(dest, done["events"])


def test_a_writer_killed_mid_backup_leaves_a_pair_that_opens_and_verifies(
    live_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_backup, "STEP_PAGES", 1)  # a step per page: killed mid-ledger
    dest = tmp_path / "backup"
    killed: list[int] = []

    def kill(_: int) -> None:
        if not killed:
            writer.stop(signal.SIGKILL)
            killed.append(writer.proc.returncode)

    with turn_writer(live_home) as writer:
        done = backup_home(Home(live_home), dest, lambda total, label: _bar(kill))

    assert killed == [-signal.SIGKILL]
    assert done["verified"] and done["forgotten_keys"] == 0
    assert _cli(live_home, "verify", "--json")["ok"]
    _opens_as_a_working_mind(dest, done["events"])


def test_a_backup_after_a_forget_counts_the_forgotten_keys_and_reads_them_as_forgotten(
    live_home: Path, tmp_path: Path
) -> None:
    turn = _cli(
        live_home,
        "turn",
        "My code is Zqxlocker",
        "--model",
        "mock",
        "--mock-reply",
        "Ok.",
        "--json",
    )
    _cli(live_home, "turn", "Writer message", "--model", "mock", "--mock-reply", "Fine.")
    _cli(live_home, "forget", "--turn", turn["turn"], "--yes")

    done = backup_home(Home(live_home), tmp_path / "backup")

    assert done["forgotten_keys"] > 0 and done["pending_forgets"] == 0
    assert "Zqxlocker" not in _cli(tmp_path / "backup", "recall", "code")
    _opens_as_a_working_mind(tmp_path / "backup", done["events"])


class Crashed(Exception):
    """A forget stopped at a crash point."""


def test_a_forget_a_crash_left_unfinished_is_finished_by_the_copys_first_opening(
    mind_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mindledger
    from mindledger import backup, forget

    with mindledger.open(mind_home) as mind:
        cid = mind.commit("Change the locker code 4242")["cid"]
        mind.commit("Count the herons by the river")

    def crash_at(name: str) -> None:
        if name == "after-keys":
            raise Crashed(name)

    monkeypatch.setattr(forget, "_crash_point", crash_at)
    with mindledger.open(mind_home) as mind, pytest.raises(Crashed):
        mind.forget("commitment", str(cid))
    # The crash came after the backup's own finish_forgets: the copy's key store notes it.
    monkeypatch.setattr(backup, "finish_forgets", lambda home: None)
    with mindledger.open(mind_home) as mind:
        done = mind.backup(str(tmp_path / "copy"))

    assert done["pending_forgets"] == 1 and done["forgotten_keys"] > 0
    assert (tmp_path / "copy" / "forget.pending").exists()
    with mindledger.open(tmp_path / "copy") as copy:
        texts = [row["text"] for row in copy.query("SELECT text FROM commitments")]
        forgotten = [e for e in copy.log(limit=100) if e["type"] == "mind.forget.forgotten"]
        verified = copy.verify()
    assert "Count the herons by the river" in texts
    assert not any("4242" in (text or "") for text in texts)
    assert len(forgotten) == 1 and verified["ok"] is True
    assert not (tmp_path / "copy" / "forget.pending").exists()


def test_the_python_api_refuses_a_dest_that_is_not_a_path_in_one_error(mind_home: Path) -> None:
    import mindledger
    from mindledger.domain.errors import InvalidInputError

    with mindledger.open(mind_home) as mind, pytest.raises(InvalidInputError, match="backup"):
        mind.backup(42)  # type: ignore[arg-type]
    with mindledger.open(mind_home) as mind, pytest.raises(InvalidInputError, match="`dest`"):
        mind.backup("has\x00nul")


def test_progress_counts_every_page_copied(
    mind_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_backup, "STEP_PAGES", 2)
    told: list[tuple[int, str]] = []
    steps: list[int] = []

    def shown(total: int, label: str) -> Any:
        told.append((total, label))
        return _bar(steps.append)

    backup_home(Home(mind_home), tmp_path / "copy", shown)

    pages = sum(
        sqlite_backup.page_count(tmp_path / "copy" / n) for n in ("ledger.sqlite", "keys.sqlite")
    )
    assert told == [(pages, "backing up")]
    assert sum(steps) == pages and len(steps) > 2
