"""Processes that run only scripted turns (`--model mock --mock-reply`) never import LiteLLM (it
costs seconds of CPU each), and print what they printed when the mock ran through LiteLLM."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mindledger import models
from mindledger.cli.main import mind as mind_command
from tests.conftest import REPO, subprocess_env
from tests.e2e.server_processes import NOW, Served, client_env, serving

REPLY = "Sure.\nCOMMIT: water the plants daily"
TEXT = "Will you water the plants?"
# A module every process imports first: it notes each import of litellm, however the process
# ends (a server is stopped by a signal), and that it ran at all.
PROBE = """
import os, sys

class _Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            with open(os.environ["PROBE_LOG"], "a") as f:
                f.write(f"litellm {os.getpid()}\\n")
        return None

with open(os.environ["PROBE_LOG"], "a") as f:
    f.write(f"started {os.getpid()}\\n")
sys.meta_path.insert(0, _Watch())
"""


@pytest.fixture
def probe(tmp_path: Path) -> dict[str, str]:
    """Environment entries that load the probe into every Python process started with them."""
    folder = tmp_path / "probe"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(PROBE)
    return {"PYTHONPATH": f"{folder}:{REPO}", "PROBE_LOG": str(tmp_path / "probe.log")}


def probed(probe: dict[str, str]) -> tuple[int, int]:
    """(processes that ran the probe, imports of litellm they made)."""
    lines = Path(probe["PROBE_LOG"]).read_text().splitlines()
    return sum(x.startswith("started") for x in lines), sum(x.startswith("litellm") for x in lines)


def run_cli(home: Path, *args: str) -> Any:
    result = CliRunner().invoke(mind_command, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else result.stdout


def test_a_scripted_turn_process_prints_what_litellms_mock_printed_without_importing_it(
    tmp_path: Path, probe: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_NOW", NOW)
    run_cli(tmp_path / "scripted", "init", "--name", "Echo", "--json")
    run_cli(tmp_path / "scripted", "commit", "send the report on Friday", "--json")
    shutil.copytree(tmp_path / "scripted", tmp_path / "litellm")  # the same secrets: same CIDs
    args = ["turn", TEXT, "--model", "mock", "--mock-reply", REPLY, "--no-server", "--json"]

    done = subprocess.run(
        [sys.executable, "-c", "from mindledger.cli.main import main; main()", *args],
        env=subprocess_env(tmp_path / "scripted", MIND_NOW=NOW, **probe),
        capture_output=True,
        text=True,
        timeout=300,
    )
    # The same turn in this process, with the mock run through LiteLLM as it was.
    through_litellm = models.MOCK._replace(build=models._litellm)  # a ModelKind: a NamedTuple
    monkeypatch.setattr(models, "KINDS", (models.EMBEDDED, through_litellm, models.LITELLM))
    expected = run_cli(tmp_path / "litellm", *args)

    assert done.returncode == 0, done.stderr
    assert "litellm" in sys.modules  # the reference really ran through LiteLLM
    volatile = {"turn", "latency_ms"}
    got = json.loads(done.stdout)
    assert {k: v for k, v in got.items() if k not in volatile} == {
        k: v for k, v in expected.items() if k not in volatile
    }
    assert got["status"] == "complete" and len(got["opened"]) == 1
    started, imported = probed(probe)
    assert started >= 1 and imported == 0


def stream_completion(server: Served, home: Path, body: dict[str, Any]) -> str:
    """A streamed OpenAI chat completion's raw event text."""
    url = urlsplit(server.info["url"])
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=300)
    headers = {"Authorization": f"Bearer {server.token(home)}", "Content-Type": "application/json"}
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body).encode(), headers)
        response = conn.getresponse()
        assert response.status == 200
        return response.read().decode()
    finally:
        conn.close()


def test_a_server_of_a_mind_on_mock_answers_scripted_turns_without_importing_litellm(
    tmp_path: Path, probe: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_NOW", NOW)  # the server's clock
    home = tmp_path / "echo"
    run_cli(home, "init", "--name", "Echo", "--json")
    run_cli(home, "model", "set", "mock", "--json")  # so the server warms no model client
    scripted = {"model": "mock", "mock_reply": REPLY}
    chat = {"model": "mind/Echo", "messages": [{"role": "user", "content": TEXT}]}

    with serving([home], client_env(home, **probe)) as server:
        turn = server.http(
            "POST", server.mind_path(home, "turns"), home, {"text": TEXT, **scripted}
        )
        whole = server.http(
            "POST", "/v1/chat/completions", home, {**chat, "mind_options": scripted}
        )
        streamed = stream_completion(
            server, home, {**chat, "stream": True, "mind_options": scripted}
        )

    assert turn[0] == 200, turn
    assert turn[1]["reply"] == "Sure." and turn[1]["model"] == "mock"
    assert whole[0] == 200 and whole[1]["choices"][0]["message"]["content"] == "Sure."
    assert streamed.rstrip().endswith("data: [DONE]")
    started, imported = probed(probe)
    assert started >= 1 and imported == 0


def test_mcp_initializes_and_runs_a_scripted_turn_without_importing_litellm(
    tmp_path: Path, probe: dict[str, str]
) -> None:
    home = tmp_path / "echo"
    run_cli(home, "init", "--name", "Echo", "--json")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from mindledger.cli.main import main; main()", "mcp", "--home", str(home)],
        env=subprocess_env(home, **probe, MIND_MOCK_REPLY=REPLY),  # agents are offered no script
        cwd=str(REPO),
    )

    async def scenario() -> Any:
        with (tmp_path / "mcp.err").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await session.call_tool("turn", {"text": TEXT, "model": "mock"})

    said = anyio.run(scenario)

    assert not said.is_error and said.structured_content["reply"] == "Sure."
    started, imported = probed(probe)
    assert started >= 1 and imported == 0


def test_a_turn_of_a_mind_on_mock_without_a_script_is_refused_and_records_nothing(
    tmp_path: Path,
) -> None:
    home = tmp_path / "echo"
    run_cli(home, "init", "--name", "Echo", "--json")
    run_cli(home, "model", "set", "mock", "--json")
    before = run_cli(home, "log", "--json")

    result = CliRunner().invoke(mind_command, ["--home", str(home), "turn", "hi", "--json"])

    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.strip() == (
        'Error: the mind\'s model is "mock", which needs a scripted reply (--mock-reply) or '
        "another model (mind model set MODEL)"
    )
    assert run_cli(home, "log", "--json") == before


def test_asking_with_a_scripted_reply_matches_questions_without_importing_litellm(
    tmp_path: Path, probe: dict[str, str]
) -> None:
    home = tmp_path / "echo"
    run_cli(home, "init", "--name", "Echo", "--json")
    run_cli(home, "remember", "Paris", "--question", "capital of France", "--json")
    args = ["ask", "what is the capital city of France?", "--model", "mock"]

    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from mindledger.cli.main import main; main()",
            *args,
            "--mock-reply",
            "Paris, I think.",
            "--json",
        ],
        env=subprocess_env(home, **probe),
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["score"] > 0  # the question was matched by its meaning
    started, imported = probed(probe)
    assert started >= 1 and imported == 0
