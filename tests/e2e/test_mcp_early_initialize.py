"""`mind mcp` answers a well-formed `initialize` before importing the SDK (`service.mcp_stdio`):
the answer is the SDK's own, byte for byte in meaning; the SDK's answer to the replayed request
is not sent twice; anything else is still the SDK's to answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mindledger.service.mcp_stdio import (
    CAPABILITIES,
    HANDSHAKE_VERSIONS,
    initialize_answer,
    initialize_request,
)
from tests.conftest import REPO, subprocess_env
from tests.service.serving import MIND, init_home


def initialize(request_id: Any = 1, version: str = "2025-06-18", **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "test", "version": "1"},
            **params,
        },
    }


def exchange(home: Path, messages: list[dict[str, Any]], answers: int) -> list[dict[str, Any]]:
    """Send `messages` to `mind mcp --home HOME`, read `answers` lines, close its stdin."""
    process = subprocess.Popen(
        [*MIND, "mcp", "--home", str(home)],
        env=subprocess_env(home),
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        lines = [json.loads(process.stdout.readline()) for _ in range(answers)]
        process.stdin.close()
        rest = process.stdout.read()  # nothing more: the early answer is not repeated
        assert process.wait(timeout=120) == 0, process.stderr.read() if process.stderr else ""
        assert rest == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return lines


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_home(tmp_path_factory.mktemp("mcp-early") / "echo", "Écho")


@pytest.mark.parametrize("version", [*HANDSHAKE_VERSIONS, "2099-01-01", "2026-07-28"])
def test_the_early_answer_is_the_sdks_own(home: Path, version: str) -> None:
    # A ping first: the SDK answers it, so the initialize after it is the SDK's to answer.
    sdk = exchange(
        home, [{"jsonrpc": "2.0", "id": 0, "method": "ping"}, initialize("a", version)], 2
    )[1]
    request = initialize_request(json.dumps(initialize("a", version)).encode())
    assert request == ("a", version)
    from importlib.metadata import version as package_version

    early = json.loads(initialize_answer(*request, "Écho", package_version("mindledger")))
    assert early == sdk


def test_an_early_answered_session_goes_on_with_the_sdk(home: Path) -> None:
    answers = exchange(
        home,
        [
            initialize(7),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
        ],
        2,
    )
    assert answers[0]["id"] == 7 and answers[0]["result"]["serverInfo"]["name"] == "mindledger Écho"
    assert answers[1]["id"] == 8 and "turn" in {t["name"] for t in answers[1]["result"]["tools"]}


def test_the_sdk_constants_are_ours() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert HANDSHAKE_PROTOCOL_VERSIONS == HANDSHAKE_VERSIONS
    assert CAPABILITIES  # compared whole with the SDK's answer above


@pytest.mark.parametrize(
    "message",
    [
        b"not json",
        b"[1]",
        b"[" * 100_000 + b"]" * 100_000,  # too deep for json.loads (RecursionError)
        json.dumps({**initialize(), "jsonrpc": "1.0"}).encode(),
        json.dumps({**initialize(), "method": "ping"}).encode(),
        json.dumps(initialize(True)).encode(),
        json.dumps(initialize(None)).encode(),
        json.dumps(initialize(1, clientInfo={"name": "x"})).encode(),
        json.dumps(initialize(1, capabilities={"roots": 1})).encode(),
        json.dumps(initialize(1, protocolVersion=5)).encode(),
        json.dumps({k: v for k, v in initialize().items() if k != "params"}).encode(),
    ],
)
def test_anything_but_a_well_formed_initialize_is_left_to_the_sdk(message: bytes) -> None:
    assert initialize_request(message) is None


def test_the_name_is_read_early_only_where_no_other_backend_may_be_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.identity_view import plain_sqlite_name

    home = init_home(tmp_path / "plain", "Plain")
    assert plain_sqlite_name(home) == "Plain"
    assert plain_sqlite_name(tmp_path / "none") is None
    monkeypatch.setenv("mind_backend", "postgres")
    assert plain_sqlite_name(home) is None
    monkeypatch.delenv("mind_backend")
    (home / ".env").write_text("MIND_BACKEND=sqlite\n")
    assert plain_sqlite_name(home) is None  # the settings decide
    (home / ".env").unlink()
    (home / "forget.pending").write_text("")
    assert plain_sqlite_name(home) is None  # a forget to finish first


def test_a_bad_setting_found_after_the_early_answer_is_one_error_line(home: Path) -> None:
    process = subprocess.run(
        [*MIND, "mcp", "--home", str(home)],
        env=subprocess_env(home, MIND_ALLOW_PAST_NOW="perhaps"),
        cwd=REPO,
        input=json.dumps(initialize()) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 1
    assert [json.loads(line)["id"] for line in process.stdout.splitlines()] == [1]
    errors = process.stderr.strip().splitlines()
    assert (
        len(errors) == 1 and errors[0].startswith("Error: ") and "MIND_ALLOW_PAST_NOW" in errors[0]
    )
