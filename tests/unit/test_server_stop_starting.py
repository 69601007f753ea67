"""`mind server stop` right after a client started a background server: the server has not yet
written server.json, so stop finds it through the pid the client noted (server.starting)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mindledger
from mindledger.server_files import STARTING_FILE, mark_starting, starting_server_pid


@pytest.fixture
def starting(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A home and a process that looks like the server a client just started for it (its
    command line is `... serve --home HOME`) and never gets as far as server.json."""
    home = tmp_path / "home"
    home.mkdir()
    waits = "import sys; sys.stdin.read()"  # until its stdin closes or it is signalled
    command = [sys.executable, "-c", waits, "serve", "--home", str(home)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE)
    # Popen returns once the child is past the point of no return of its exec, which can be
    # before the kernel shows its new command line: a client's note is read much later.
    cmdline = Path(f"/proc/{process.pid}/cmdline")
    deadline = time.monotonic() + 60
    while b"serve" not in cmdline.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield home, process
    finally:
        process.kill()
        process.wait()


def test_a_server_still_starting_is_found_and_stopped(
    starting: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    home, process = starting
    mark_starting(home, process.pid)

    assert starting_server_pid(home) == process.pid
    stopped = mindledger.stop_server(home, timeout=0.2)  # waits for server.json, then signals

    assert stopped.model_dump(mode="json") == {"stopped": True, "pid": process.pid}
    assert process.wait(timeout=60) != 0  # ended by the signal


def test_a_note_without_the_server_s_pid_or_of_another_home_is_not_a_starting_server(
    starting: tuple[Path, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    home, process = starting
    (home / STARTING_FILE).write_text("1\n", encoding="utf-8")  # the client's pid only
    assert starting_server_pid(home) is None

    other = tmp_path / "other"
    other.mkdir()
    mark_starting(other, process.pid)  # a live pid, but it serves another home
    assert starting_server_pid(other) is None
    assert mindledger.stop_server(other, timeout=0.2).stopped is False
    assert process.poll() is None  # never signalled


@pytest.mark.parametrize("timeout", [0, -1, "5", True])
def test_a_timeout_that_is_no_positive_number_is_refused(tmp_path: Path, timeout: object) -> None:
    with pytest.raises(mindledger.InvalidInputError) as refused:
        mindledger.stop_server(tmp_path, timeout=timeout)  # type: ignore[arg-type]

    assert refused.value.param == "timeout"
