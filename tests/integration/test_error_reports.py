"""One error path, strict about content (issue 27): a failure raised inside a dependency's
boundary (LiteLLM's completion and embedding calls, DuckDB, SQLite, file I/O, psycopg) with
multi-line text, tracebacks, URLs and key-shaped strings reaches every front-end (the CLI, the
HTTP routes, server-sent events on /v1 and the OpenAI endpoint, MCP) as our words and at most
its first line: no traceback, no dependency URL, no package path, no secret, one line for the
CLI; the traceback is in the home's errors log under the error id the message names."""

from __future__ import annotations

import asyncio
import errno
import json
import re
import sqlite3
import string
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from mindledger.adapters.litellm_model import import_litellm
from mindledger.cli.main import mind as mind_command
from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.mcp_server import mind_mcp
from mindledger.service.minds import Minds

MARK = "boundaryfailure"  # every injected first line starts with it
SITE = "/usr/lib/python3/site-packages/somedep/core.py"
DEPENDENCY_URLS = [
    "https://github.com/BerriAI/litellm/issues/new?template=bug_report.yml&dep-docs=1",
    "https://errors.pydantic.dev/2.9/v/dep-docs",
    "https://duckdb.org/docs/dep-docs/errors",
    "http://www.psycopg.org/psycopg3/dep-docs/",
    "https://docs.litellm.ai/dep-docs/providers",
]
ERROR_ID = re.compile(r"error id ([0-9a-f]{6})")


@dataclass(frozen=True)
class Failure:
    """What a dependency says when it fails: the whole text and what must never be shown."""

    text: str
    keys: tuple[str, ...]


def _key(kind: str, token: str) -> tuple[str, str]:
    """A key-shaped string as it may appear, and the secret part of it."""
    shapes = {
        "openai": (f"sk-{token}", f"sk-{token}"),
        "anthropic": (f"sk-ant-{token}", f"sk-ant-{token}"),
        "bearer": (f"Authorization: Bearer {token}", token),
        "param": (f"api_key={token}", token),
        "github": (f"ghp_{token}{token}", f"ghp_{token}{token}"),
    }
    return shapes[kind]


tokens = st.text(string.ascii_letters + string.digits, min_size=16, max_size=24).map(
    lambda t: "Q7" + t  # a digit: the shape a credential has
)
keys = st.builds(
    _key, st.sampled_from(["openai", "anthropic", "bearer", "param", "github"]), tokens
)
words = st.text(string.ascii_lowercase + " ", min_size=0, max_size=30).map(
    lambda w: " ".join(w.split())
)
TRACEBACK = (
    "Traceback (most recent call last):\n"
    f'  File "{SITE}", line 12, in call\n'
    "    raise Boom(detail)\n"
    "somedep.errors.Boom: it broke"
)


@st.composite
def failures(draw: st.DrawFn) -> Failure:
    first_key = draw(st.none() | keys)
    first = f"{MARK} {draw(words)}".strip()
    if first_key is not None:
        first += f" ({first_key[0]})"
    if draw(st.booleans()):
        first += f" see {draw(st.sampled_from(DEPENDENCY_URLS))}"
    extra_key = draw(keys)
    rest = [
        TRACEBACK,
        f"For further information visit {draw(st.sampled_from(DEPENDENCY_URLS))}",
        f"the request was sent with {extra_key[0]}",
        f"  at {SITE}:{draw(st.integers(1, 999))}",
    ]
    lines = draw(st.permutations(rest))[: draw(st.integers(1, len(rest)))]
    secrets = tuple(k[1] for k in (first_key, extra_key) if k is not None)
    return Failure("\n".join([first, *lines]), secrets)


def dependency_error(boundary: str, text: str) -> BaseException:
    """The exception a dependency raises, with `text`."""
    if boundary == "duckdb":
        return duckdb.IOException(text)
    if boundary == "sqlite":
        return sqlite3.OperationalError(text)
    if boundary == "psycopg":
        return psycopg.OperationalError(text)
    if boundary == "file":
        return OSError(errno.EIO, text)
    litellm = import_litellm()
    failure: BaseException = litellm.APIConnectionError(text, llm_provider="openai", model="x")
    return failure


BOUNDARIES = ["duckdb", "sqlite", "psycopg", "file", "litellm"]


def fresh_query() -> str:
    """A query never asked before: its vector is not in the embeddings cache, so recall calls
    the embedding model for it."""
    return f"where is report {uuid.uuid4().hex}"


def raising(boundary: str, failure: Failure) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise dependency_error(boundary, failure.text)

    return fail


def check_shown(shown: str, failure: Failure, home: Path, path: str) -> None:
    """What a front-end showed about `failure`: nothing it must not show; the error id it
    names, if any, is in the home's errors log with the traceback. (A failed completion is no
    exception: the turn is recorded as failed, with the provider's first line, and no id.)"""
    assert "Traceback" not in shown and 'File "' not in shown, shown
    assert "://" not in shown and "dep-docs" not in shown, shown
    assert "site-packages" not in shown and "core.py:" not in shown, shown
    for key in failure.keys:
        assert key not in shown, shown
    named = ERROR_ID.search(shown)
    if (
        MARK in shown and path != "completion"
    ):  # the dependency's words were quoted: what was cut is kept in the log
        assert named is not None, shown
    if named is not None:
        log = (home / "logs" / "errors.log").read_text()
        entry = log[log.index(f"error {named.group(1)}\n") :]
        assert "Traceback (most recent call last)" in entry and MARK in entry
        for key in failure.keys:
            assert key not in log


HYPOTHESIS = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mind whose recall uses the embedding model, with a message to compare a query with (so
    the embedding call is on recall's path)."""
    path = tmp_path_factory.mktemp("errors") / "mind"
    runner = CliRunner()
    said = ["turn", "The report is in the shared drive", "--model", "mock", "--mock-reply", "Ok."]
    # the stored items' vectors from their projection: a recall with vectors embeds its query
    vectors = ["project", "--vectors"]
    setup = (["init", "--name", "Echo"], ["config", "set", "embedding.recall", "on"], said, vectors)
    for args in setup:
        result = runner.invoke(mind_command, ["--home", str(path), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def served(home: Path) -> Iterator[tuple[TestClient, Minds]]:
    # MCP's turns are scripted by the setting (agents are offered no script).
    minds = Minds.open([Home(home).with_flags(mock_reply=("`mock_reply`", "Hi."))])
    with TestClient(build_app(minds), raise_server_exceptions=False) as client:
        yield client, minds
    minds.close(10)


def inject(monkeypatch: pytest.MonkeyPatch, path: str, boundary: str, failure: Failure) -> None:
    """Fail at one boundary: `recall` (the read model's retrieval), `turn` (a turn's context),
    `embedding` or `completion` (LiteLLM's calls)."""
    from mindledger.adapters import embeddings
    from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings
    from mindledger.adapters.scripted_model import ScriptedModel
    from mindledger.projections.retrieval import recall, turn_reads

    litellm = import_litellm()

    if path == "embedding":
        monkeypatch.setattr(litellm, "embedding", raising("litellm", failure))
        # The offline model is called in-process, not through LiteLLM: its call is the boundary.
        monkeypatch.setattr(embeddings, "local_vectors", raising("litellm", failure))
        # Recall's query against the stored vectors goes straight to the model (no LiteLLM).
        monkeypatch.setattr(embeddings, "embed_matrix", raising("litellm", failure))
    elif path == "completion":
        monkeypatch.setattr(litellm, "completion", raising("litellm", failure))

        # Scripted turns need no model client; here they go through LiteLLM's mock (the
        # reference the scripted model is compared with) so that its failing call is met.
        def through_litellm(self: ScriptedModel, messages: Any, on_token: Any = None) -> Any:
            settings = ModelSettings(spec="mock", mock_reply=self.reply)
            return LiteLLMModel(settings).complete(messages, on_token)

        monkeypatch.setattr(ScriptedModel, "complete", through_litellm)
    else:
        module = recall if path == "recall" else turn_reads
        monkeypatch.setattr(module, "recall", raising(boundary, failure))


@HYPOTHESIS
@given(
    failure=failures(),
    boundary=st.sampled_from(BOUNDARIES),
    path=st.sampled_from(["recall", "embedding", "turn", "completion"]),
)
def test_the_cli_says_one_clean_line(
    home: Path, failure: Failure, boundary: str, path: str
) -> None:
    command = (
        ["recall", fresh_query()]
        if path in ("recall", "embedding")
        else ["turn", "hello there", "--model", "mock", "--mock-reply", "Hi."]
    )

    with pytest.MonkeyPatch.context() as patch:
        inject(patch, path, boundary, failure)
        result = CliRunner().invoke(mind_command, ["--home", str(home), *command])

    assert result.exit_code == 1, result.output + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    check_shown(result.stdout + result.stderr, failure, home, path)


@HYPOTHESIS
@given(
    failure=failures(),
    boundary=st.sampled_from(BOUNDARIES),
    path=st.sampled_from(["recall", "embedding", "turn", "completion"]),
)
def test_the_http_routes_answer_one_clean_json_error(
    served: tuple[TestClient, Minds], failure: Failure, boundary: str, path: str
) -> None:
    client, minds = served
    mind = next(iter(minds))
    headers = {"Authorization": f"Bearer {mind.token}"}

    with pytest.MonkeyPatch.context() as patch:
        inject(patch, path, boundary, failure)
        if path in ("recall", "embedding"):
            answer = client.get(f"/v1/minds/Echo/recall?q={fresh_query()}", headers=headers)
        else:
            body = {"text": "hello there", "model": "mock", "mock_reply": "Hi."}
            answer = client.post("/v1/minds/Echo/turns", json=body, headers=headers)

    assert answer.status_code >= 400
    error = answer.json()["error"]
    assert set(error) >= {"message", "type", "param", "code"}
    assert "\n" not in error["message"]
    check_shown(json.dumps(answer.json()), failure, mind.home.path, path)


def sse_errors(text: str) -> list[Any]:
    """The `data:` payloads of a server-sent event stream that carry an error."""
    found = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            data = json.loads(line[5:])
            if isinstance(data, dict) and "error" in data:
                found.append(data)
    return found


@HYPOTHESIS
@given(
    failure=failures(),
    boundary=st.sampled_from(BOUNDARIES),
    path=st.sampled_from(["turn", "completion"]),
    openai=st.booleans(),
)
def test_streamed_turns_end_in_one_clean_error(
    served: tuple[TestClient, Minds], failure: Failure, boundary: str, path: str, openai: bool
) -> None:
    client, minds = served
    mind = next(iter(minds))
    headers = {"Authorization": f"Bearer {mind.token}"}
    options = {"model": "mock", "mock_reply": "Hi."}

    with pytest.MonkeyPatch.context() as patch:
        inject(patch, path, boundary, failure)
        if openai:
            messages = [{"role": "user", "content": "hello there"}]
            body: dict[str, Any] = {"model": "mind/Echo", "messages": messages, "stream": True}
            answer = client.post(
                "/v1/chat/completions", json={**body, "mind_options": options}, headers=headers
            )
        else:
            body = {"text": "hello there", "stream": True, **options}
            answer = client.post("/v1/minds/Echo/turns", json=body, headers=headers)

    if not answer.headers["content-type"].startswith("text/event-stream"):
        # Both routes answer a refusal before the turn starts with its status, not a stream
        # (the OpenAI route a failure before any text too).
        errors = [answer.json()]
        assert answer.status_code >= 400 and set(errors[0]["error"]) == {
            "message",
            "type",
            "param",
            "code",
        }
    else:
        errors = sse_errors(answer.text)
    assert len(errors) == 1, answer.text
    check_shown(json.dumps(errors), failure, mind.home.path, path)


@HYPOTHESIS
@given(
    failure=failures(),
    boundary=st.sampled_from(BOUNDARIES),
    path=st.sampled_from(["recall", "embedding", "turn", "completion"]),
)
def test_mcp_tools_report_one_clean_error(
    served: tuple[TestClient, Minds], failure: Failure, boundary: str, path: str
) -> None:
    _, minds = served
    mind = next(iter(minds))
    if path in ("recall", "embedding"):
        tool, arguments = "recall", {"query": fresh_query()}
    else:
        tool, arguments = "turn", {"text": "hello there", "model": "mock"}  # scripted: `served`

    with pytest.MonkeyPatch.context() as patch, ThreadPoolExecutor(1) as pool:
        inject(patch, path, boundary, failure)
        result: Any = asyncio.run(mind_mcp(mind, pool).call_tool(tool, arguments))

    # An error result, its first block one line: a refusal, a failure, or (a failed
    # completion) the turn recorded failed, its JSON beside the line.
    assert result.is_error and "\n" not in result.content[0].text
    check_shown(json.dumps(result.model_dump(mode="json")), failure, mind.home.path, path)
