"""A model spec is checked when it is set, and LiteLLM never prints on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mindledger.compose import Home, open_mind
from tests.conftest import subprocess_env
from tests.e2e.test_cli_boundaries import Cli, assert_one_error_line, ledger_head

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
BACK = "mind model set local/smollm2-135m-instruct"


@pytest.mark.parametrize("spec", ["nonsense", "local", "local/", "bogusprovider/xyz", "openai/"])
def test_an_unknown_model_is_refused_in_one_line_saying_how_to_go_back(
    cli: Cli, mind_home: Path, spec: str
) -> None:
    before = ledger_head(mind_home)

    result = cli("model", "set", spec)

    assert_one_error_line(result, "unknown model", BACK)
    assert ledger_head(mind_home) == before


@pytest.mark.parametrize(
    "spec", ["openai/gpt-4o-mini", "ollama/llama3.2", "mock", "local/smollm2-135m-instruct"]
)
def test_a_known_model_is_set(cli: Cli, mind_home: Path, spec: str) -> None:
    result = cli("model", "set", spec, "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json() == {"model": spec}


def test_chat_refuses_an_unknown_model_and_keeps_the_one_in_use(cli: Cli, mind_home: Path) -> None:
    script = "/model bogusprovider/xyz\n/model\n"

    result = cli("chat", "--model", "mock", "--mock-reply", "Noted.", input=script)

    assert result.exit_code == 0, result.stderr
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("Error: unknown model") and BACK in errors[0]
    assert "model: mock" in result.output


def test_tick_json_stays_json_with_a_model_litellm_does_not_know(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    env = subprocess_env(home)
    assert subprocess.run([*MIND, "init", "--name", "Echo"], env=env).returncode == 0
    mind = open_mind(Home(home))  # recorded before the check existed
    try:
        mind.set_model("bogusprovider/xyz")
    finally:
        mind.close()

    tick = subprocess.run([*MIND, "tick", "--json"], env=env, capture_output=True, text=True)

    assert "\x1b" not in tick.stdout and "Provider List" not in tick.stdout
    assert isinstance(json.loads(tick.stdout), dict)


def test_chat_help_lists_every_slash_command(cli: Cli, mind_home: Path) -> None:
    commands = ["help", "commitments", "threads", "concepts", "identity", "model", "context"]
    commands += ["raw", "prompt", "verify", "exit", "quit"]

    result = cli("chat", "--model", "mock", "--mock-reply", "Noted.", input="/help\n")

    assert result.exit_code == 0, result.stderr
    listed = {word[1:].rstrip(",") for word in result.output.split() if word.startswith("/")}
    assert set(commands) <= listed


@pytest.mark.parametrize("spec", ["local/nosuch", "local/smollm2", "local/all-minilm-l6-v2"])
def test_a_local_name_that_is_not_the_local_model_is_refused_before_a_turn_writes(
    cli: Cli, mind_home: Path, spec: str
) -> None:
    before = ledger_head(mind_home)

    turned = cli("turn", "hello", "--model", spec)
    chosen = cli("model", "set", spec)

    assert_one_error_line(turned, f"unknown local model {spec!r}", "nothing was recorded")
    assert_one_error_line(chosen, f"unknown model {spec!r}", BACK)
    assert ledger_head(mind_home) == before
    assert cli("verify").exit_code == 0


def test_a_mind_set_to_an_unknown_local_name_says_so_when_asked_what_runs(mind_home: Path) -> None:
    from mindledger.models import model_unavailable

    reason = model_unavailable(Home(mind_home), "local/nosuch")

    assert reason is not None and "unknown local model 'local/nosuch'" in reason
