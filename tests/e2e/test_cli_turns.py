"""`mind turn` and `mind model` end to end, including a real turn on the embedded model."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mindledger.adapters.local_model import model_path
from tests.conftest import REPO, Result, subprocess_env

Cli = Callable[..., Result]
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
TURN_KEYS = {
    "turn",
    "seq",
    "status",
    "reply",
    "reply_raw",
    "opened",
    "closed",
    "claims",
    "rejections",
    "identity",
    "threads",
    "context",
    "context_tokens",
    "model",
    "usage",
    "latency_ms",
    "finish_reason",
    "cut_off",
    "failure",
    "events",
}


def test_turn_json_has_the_documented_fields(cli: Cli, mind_home: Path) -> None:
    result = cli(
        "turn",
        "Remind me to call mum",
        "--model",
        "mock",
        "--mock-reply",
        "Noted.\nCOMMIT: call mum\nCLOSE: c0000000000",
        "--json",
    )

    data = result.json()
    assert result.exit_code == 0
    assert set(data) == TURN_KEYS
    assert (data["status"], data["reply"], data["model"]) == ("complete", "Noted.", "mock")
    assert data["reply_raw"] == "Noted.\nCOMMIT: call mum\nCLOSE: c0000000000"
    assert len(data["opened"]) == 1 and data["closed"] == []
    assert data["rejections"] == [
        {"line": "CLOSE: c0000000000", "reason": "unknown CID c0000000000"}
    ]
    assert data["events"] == {
        "first": 2,
        "last": 7,
    }  # started, its number, replied, opened, rejected, completed
    assert data["usage"] == {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    assert data["context"][0]["kind"] == "identity"
    assert cli("verify", "--json").json()["ok"] is True


def test_turn_reads_the_message_from_stdin(cli: Cli, mind_home: Path) -> None:
    result = cli(
        "turn",
        "-",
        "--model",
        "mock",
        "--mock-reply",
        "Got it.",
        "--json",
        input="a message from a pipe\n",
    )

    assert result.json()["status"] == "complete"
    listed = cli("query", "SELECT text FROM messages WHERE role = 'user'").json()
    assert listed == [{"text": "a message from a pipe"}]


def test_mock_reply_from_a_file(cli: Cli, mind_home: Path, tmp_path: Path) -> None:
    (tmp_path / "reply.txt").write_text("From a file.\nREFLECT: scripted")

    result = cli(
        "turn", "hi", "--model", "mock", "--mock-reply", f"@{tmp_path}/reply.txt", "--json"
    )

    assert result.json()["reply"] == "From a file."


def test_a_failed_generation_exits_1_and_keeps_the_message(cli: Cli, mind_home: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    result = cli(
        "turn",
        "is anyone there?",
        "--model",
        "openai/nothing",
        "--api-base",
        f"http://127.0.0.1:{port}/v1",
    )

    assert result.exit_code == 1
    assert result.stderr.startswith("Error: generation failed (connection)")
    assert "kept at position 2" in result.stderr
    types = [e["type"] for e in cli("log", "--json").json()]
    assert types[-3:] == [
        "mind.turn.started",
        "mind.turn_numbers.given",
        "mind.turn.generation_failed",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "mock"], "--model mock needs --mock-reply"),
        (["--mock-reply", "x", "--model", "openai/gpt-4o"], "only with --model mock"),
    ],
)
def test_bad_model_options_are_clear_errors(
    cli: Cli, mind_home: Path, args: list[str], message: str
) -> None:
    result = cli("turn", "hi", *args)

    assert result.exit_code == 1 and message in result.stderr


def test_model_set_and_show(cli: Cli, mind_home: Path) -> None:
    cli("model", "set", "ollama/llama3.2")

    shown = cli("model", "show", "--json").json()
    identity = cli("identity", "--json").json()

    assert shown["model"] == "ollama/llama3.2"
    assert identity["history"][-1]["change"] == "model_switched"


needs_local_model = pytest.mark.skipif(
    model_path() is None and os.environ.get("CI") != "true",
    reason="run `mind model install-local` (CI always has it)",
)


@needs_local_model
def test_a_real_turn_on_the_embedded_local_model(tmp_path: Path) -> None:
    env = subprocess_env(tmp_path)
    subprocess.run([*MIND, "init", "--name", "Echo"], env=env, cwd=REPO, check=True)
    try:
        result = subprocess.run(
            [*MIND, "turn", "Say hello in one short sentence.", "--json"],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        data = json.loads(result.stdout)
        verified = subprocess.run(
            [*MIND, "verify", "--json"],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        subprocess.run([*MIND, "model", "stop-local"], env=env, cwd=REPO, timeout=60)

    assert result.returncode == 0, result.stderr
    assert data["status"] == "complete" and data["reply"].strip()
    assert data["model"] == "local/smollm2-135m-instruct"
    assert data["usage"]["completion_tokens"] > 0 and data["usage"]["prompt_tokens"] > 0
    assert data["events"]["first"] == 2 and data["events"]["last"] >= 4
    assert json.loads(verified.stdout)["ok"] is True


def test_chat_runs_turns_and_slash_commands(cli: Cli, mind_home: Path) -> None:
    script = "/help\nremind me to stretch\n/commitments\n/context\n/raw\n/verify\n/bogus\n/exit\n"

    result = cli(
        "chat", "--model", "mock", "--mock-reply", "Sure.\nCOMMIT: stretch hourly", input=script
    )

    assert result.exit_code == 0
    out = result.output
    assert "/context" in out and "Sure." in out and "COMMIT: stretch" in out  # /raw shows it
    assert "stretch hourly" in out  # /commitments lists it
    assert '"ok": true' in out
    assert "unknown command /bogus" in out
    assert [c["text"] for c in cli("commitments", "--json").json()] == ["stretch hourly"]


def test_a_missing_local_model_names_the_one_command_to_run(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.adapters import local_model

    monkeypatch.setattr(local_model, "model_path", lambda: None)

    result = cli("turn", "hello")

    assert result.exit_code == 1
    assert "the local model is not installed; run `mind model install-local`" in result.stderr


def test_a_blank_scripted_reply_is_refused_before_anything_is_recorded(
    cli: Cli, mind_home: Path
) -> None:
    before = cli("log", "--json").json()

    result = cli("turn", "hi", "--model", "mock", "--mock-reply", " \n")

    assert (result.exit_code, result.output) == (1, "")
    assert result.stderr.splitlines() == [
        'Error: "mock_reply" is blank: give the reply text to script'
    ], result.stderr
    assert cli("log", "--json").json() == before
