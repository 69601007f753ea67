"""A warning the server gives while it runs a command's call reaches that command: through a
running `mind serve` whose offline embedding model is really absent (its import refused by a
finder that every process of the server's environment installs), `mind recall` and `mind turn`
print the one warning line naming the command that installs it, as they do in-process with
MIND_NO_SERVER; the server's own output keeps it once. The clients here have the model, so the
line can only have come from the server. Real processes, free ports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.server_processes import (
    REPO,
    client_env,
    init_mind,
    logged_requests,
    run_mind,
    serving,
)
from tests.e2e.test_without_offline_embedder import BLOCKER, INSTALL

CALLS = [
    ["recall", "boiler code", "--json"],
    ["recall", "boiler code"],
    ["turn", "What is the boiler code?", "--model", "mock", "--mock-reply", "4471"],
    ["turn", "And the gate code?", "--model", "mock", "--mock-reply", "1234", "--json"],
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "mind"
    init_mind(home)
    return home


def test_a_command_through_the_server_prints_the_servers_one_warning(
    tmp_path: Path, home: Path
) -> None:
    blocker = tmp_path / "blocked"
    blocker.mkdir()
    # Run by every Python process started with this folder on PYTHONPATH: the server's, not ours.
    (blocker / "sitecustomize.py").write_text(BLOCKER)
    server_env = client_env(home, PYTHONPATH=f"{blocker}{os.pathsep}{REPO}")

    with serving([home], server_env):
        ran = [run_mind(call, client_env(home)) for call in CALLS]
        served = logged_requests(home, "/recall 200") + logged_requests(home, "/turns 200")

    assert served == len(CALLS)  # each call went through the server
    for call, done in zip(CALLS, ran, strict=True):
        assert done.code == 0, (call, done.err)
        warnings = [line for line in done.err.splitlines() if line.startswith("Warning:")]
        assert len(warnings) == 1 and INSTALL in warnings[0], (call, done.err)
        assert warnings[0].startswith("Warning: the offline embedding model is not installed")
    assert json.loads(ran[0].out)["vectors"]["state"] == "missing"
    assert json.loads(ran[3].out)["status"] == "complete"
    said = (tmp_path / "serve-mind.out").read_text()  # the server's own standard error
    assert said.count(INSTALL) == 1
