"""The local model's state file names a server only while that process is this home's server:
the file outlives a server that idled out, and its pid may then be any process's."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mindledger.adapters.local_model import LocalModelServer


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A process of this user that is no model server (a pid reused after one idled out)."""
    process = subprocess.Popen(["sleep", "600"])
    yield process
    process.kill()
    process.wait()


def server_recorded(tmp_path: Path, state: str) -> LocalModelServer:
    run = tmp_path / "run"
    run.mkdir()
    (run / "local-model.json").write_text(state)
    return LocalModelServer(run)


@pytest.mark.parametrize(
    "state",
    [
        "BYSTANDER",  # the pid of a process that is no model server
        '{"pid": 1000000000000000000000, "port": 8080}',
        '["pid", 1]',
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_a_stale_or_damaged_record_stops_nothing_and_is_removed(
    tmp_path: Path, bystander: subprocess.Popen[bytes], state: str
) -> None:
    if state == "BYSTANDER":
        state = json.dumps({"pid": bystander.pid, "port": 8080})
    server = server_recorded(tmp_path, state)

    stopped = server.stop()

    assert stopped is False
    assert bystander.poll() is None  # still running: never signalled
    assert not server.state.exists()


# Only read, never stopped: were the check ever lost, stop() would signal every process we may
# (-1), our own process group (0) or init (true is 1).
@pytest.mark.parametrize("pid", ["-1", "0", "1", "true"])
def test_a_record_naming_no_single_other_process_names_no_server(tmp_path: Path, pid: str) -> None:
    server = server_recorded(tmp_path, f'{{"pid": {pid}, "port": 8080}}')

    assert server._recorded() is None
    assert server._running_port() is None
