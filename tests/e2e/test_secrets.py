"""A provider that quotes the API key back: the key lands in no file of the home and on no
output stream.

The turn, which meets the provider (and LiteLLM's own logging), runs as a real `mind` process;
the mind is made in-process and read back with the in-process CLI, which prints what the
files hold (a process each would pay the start-up again for the same output)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import mindledger
from tests.conftest import Result, subprocess_env
from tests.integration.fake_provider import recording_provider

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
CANARY = "canary-7d1f0c9e5b3a4f2e"
Cli = Callable[..., Result]


def mind(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MIND, *args], env=subprocess_env(home, **env), capture_output=True, text=True
    )


@pytest.mark.parametrize("where", ["environment", "dotenv"])
def test_a_key_echoed_by_the_provider_is_redacted_everywhere(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    mindledger.init(home, name="Echo")
    env = {"OPENAI_API_KEY": CANARY} if where == "environment" else {"OPENAI_API_KEY": ""}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if where == "dotenv":
        (home / ".env").write_text(f"OPENAI_API_KEY={CANARY}\n")
    with recording_provider(echo_auth=True) as (base, requests):
        turn = mind(home, "turn", "hello", "--model", "openai/fake", "--api-base", base, **env)
        shown = cli("log", "--json")
        recall = cli("recall", "hello")

    assert len(requests) == 1 and turn.returncode == 1
    assert "generation failed (auth)" in turn.stderr and "[redacted]" in turn.stderr
    assert shown.exit_code == 0 and recall.exit_code == 0
    assert "[redacted]" in shown.output
    assert CANARY not in turn.stdout + turn.stderr
    for output in (shown, recall):
        assert CANARY not in output.output + output.stderr
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name.startswith("readmodel") for p in files)
    assert [p for p in files if CANARY.encode() in p.read_bytes()] == [
        home / ".env" for _ in range(where == "dotenv")
    ]


def test_a_password_in_the_api_base_is_redacted_in_every_form_everywhere(
    cli: Cli, home: Path
) -> None:
    import base64

    mindledger.init(home, name="Echo")
    password = "urlCanaryPw"
    basic = base64.b64encode(f"bob:{password}".encode()).decode()
    with recording_provider(echo_auth=True) as (base, requests):
        api_base = base.replace("http://", f"http://bob:{password}@")
        turn = mind(
            home, "turn", "hello", "--model", "openai/fake", "--api-base", api_base,
            OPENAI_API_KEY="",
        )  # fmt: skip
        shown = cli("log", "--json")

    assert len(requests) == 1 and turn.returncode == 1 and shown.exit_code == 0
    assert "generation failed (auth)" in turn.stderr and "[redacted]]" not in turn.stderr
    for text in (turn.stdout + turn.stderr, shown.output + shown.stderr):
        for form in (password, basic, basic.rstrip("=")):
            assert form not in text
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name.startswith("readmodel") for p in files)
    leaks = [p for p in files for form in (password, basic) if form.encode() in p.read_bytes()]
    assert leaks == []
