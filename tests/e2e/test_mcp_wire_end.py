"""`mind mcp` over a pipe a client writes and closes at once (`printf ... | mind mcp`): every
request read is answered before the server ends (the SDK ended its session at the end of the
wire, dropping the answers still being worked out: about half were lost), and a line that is
no JSON-RPC message gets the protocol's error instead of silence (`service.mcp_stdio`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, subprocess_env
from tests.e2e.test_mcp_early_initialize import initialize
from tests.service.serving import MIND, init_home

INITIALIZE = initialize(1)
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_home(tmp_path_factory.mktemp("mcp-pipe") / "echo", "Echo")


def piped(home: Path, lines: list[str]) -> list[dict[str, Any]]:
    """Every line `mind mcp` writes when `lines` are its whole standard input."""
    done = subprocess.run(
        [*MIND, "mcp", "--home", str(home)],
        input="".join(line + "\n" for line in lines),
        env=subprocess_env(home, MIND_MOCK_REPLY="Noted."),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_every_request_of_a_closed_pipe_is_answered(home: Path) -> None:
    requests = [
        INITIALIZE,
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        call(3, "turn", {"text": "Remember the boiler code."}),
        call(4, "recall", {"query": "boiler"}),
        {"jsonrpc": "2.0", "id": "five", "method": "ping"},
    ]
    answers = piped(home, [json.dumps(request) for request in requests])
    assert sorted(str(answer["id"]) for answer in answers) == ["1", "2", "3", "4", "five"]
    by_id = {answer["id"]: answer for answer in answers}
    assert "tools" in by_id[2]["result"]
    assert not by_id[3]["result"].get("isError"), by_id[3]
    assert by_id["five"]["result"] == {}


def test_a_line_that_is_no_message_gets_the_protocols_error_and_the_session_goes_on(
    home: Path,
) -> None:
    lines = [
        json.dumps(INITIALIZE),
        "this is not JSON",
        "[1, 2]",
        "[" * 100_000 + "]" * 100_000,  # too deep for json.loads: it ended the session
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": [1]}),
        json.dumps({"jsonrpc": "2.0", "id": 8, "method": "ping"}),
    ]
    answers = piped(home, lines)
    assert [answer["id"] for answer in answers] == [1, None, None, None, 7, 8]
    assert [answer.get("error", {}).get("code") for answer in answers] == [
        None,
        -32700,
        -32600,
        -32700,
        -32600,
        None,
    ]
    assert answers[-1]["result"] == {}
