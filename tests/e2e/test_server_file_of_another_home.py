"""A server.json that names another home's server (copied or edited so that it claims this
home) never makes `mind server stop` signal that server: the server named is asked whether it
serves this home (its socket, its pid, this home's token); it does not, so stop refuses in one
line, status calls the file stale, and the other home's server keeps running. Real processes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mindledger.server_files import SOCKET_FILE, ensure_token, home_identity
from tests.e2e.server_processes import (
    Served,
    client_env,
    init_mind,
    run_mind,
    serving,
    verified,
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    home = tmp_path_factory.mktemp("served") / "a"
    init_mind(home, "Served")
    with serving([home], client_env(home)) as server:
        yield server, home


def claim(victim: Path, other: Path, *, link_socket: bool) -> None:
    """Give `other` the served home's server.json, edited to name `other` itself."""
    info = json.loads((victim / "server.json").read_text(encoding="utf-8"))
    info["home_id"] = home_identity(other)
    info["homes"] = [str(other)]
    if link_socket:  # this home's socket path leads to the other server's socket
        (other / SOCKET_FILE).symlink_to(victim / SOCKET_FILE)
        info["socket"] = str(other / SOCKET_FILE)
    (other / "server.json").write_text(json.dumps(info), encoding="utf-8")
    ensure_token(other)


@pytest.mark.parametrize("link_socket", [False, True], ids=["its-socket", "linked-socket"])
def test_stop_refuses_a_server_json_naming_another_homes_server(
    served: tuple[Served, Path], tmp_path: Path, link_socket: bool
) -> None:
    server, victim = served
    other = tmp_path / "b"
    init_mind(other, "Other")
    claim(victim, other, link_socket=link_socket)
    env = client_env(other, MIND_NO_SERVER="1")

    stop = run_mind(["server", "stop"], env)
    status = run_mind(["server", "status", "--json"], env)

    assert stop.code == 1, stop.err
    lines = stop.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: server.json names a server"), stop.err
    assert "nothing was stopped" in lines[0]
    assert server.proc.poll() is None  # the other home's server still runs
    os.kill(server.proc.pid, 0)
    assert status.code == 0 and status.json() == {
        "running": False,
        "home": str(other),
        "stale_file": True,
    }
    assert verified(other)


def test_status_and_stop_still_see_the_homes_own_server(served: tuple[Served, Path]) -> None:
    _, home = served

    status = run_mind(["server", "status", "--json"], client_env(home, MIND_NO_SERVER="1"))

    assert status.code == 0 and status.json()["running"] is True
