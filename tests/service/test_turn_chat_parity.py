"""A caller's system prompt and sampling settings through every front-end of a turn: the HTTP
API (plain and streamed), the MCP `turn` tool and `mind turn`. Each records them on the turn's
started event and answers the same turn JSON; a value out of range is refused naming the field
(400 `sampling.temperature`, MCP isError, one `Error:` line) and records nothing. In-process:
Starlette's test client, the mcp package's client, click's runner; one home copied per path."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.mcp_server import mind_mcp
from mindledger.service.minds import Minds
from tests.conftest import Result

TEXT = "What is the capital of France?"
REPLY = "Paris."
SYSTEM = "Answer in one word."
SAMPLING = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 64, "seed": 7, "stop": ["END", "#"]}
CLI_SAMPLING = [
    *("--temperature", "0.2", "--top-p", "0.9", "--max-tokens", "64", "--seed", "7"),
    *("--stop", "END", "--stop", "#"),
]
# What differs between the same turn on equal ledgers: its fresh id, the time, event ids.
VOLATILE = ("turn", "latency_ms", "events")
PATHS = ("http", "stream", "mcp", "cli")


@pytest.fixture
def homes(mind_home: Path, tmp_path: Path) -> dict[str, Path]:
    """One copy of the same new mind per front-end."""
    copies = {name: tmp_path / name for name in PATHS}
    for path in copies.values():
        shutil.copytree(mind_home, path)
    return copies


@contextmanager
def http_client(home: Path) -> Iterator[TestClient]:
    minds = Minds.open([Home(home)])
    try:
        with TestClient(build_app(minds), raise_server_exceptions=False) as client:
            client.headers["Authorization"] = f"Bearer {next(iter(minds)).token}"
            yield client
    finally:
        minds.close(10)


def mcp_turn(home: Path, arguments: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The `turn` tool's input schema and one call's result (the `mock` model scripted by the
    server's setting, as agents are offered no script)."""
    scripted = Home(home).with_flags(mock_reply=("`mock_reply`", REPLY))

    async def scenario(minds: Minds, pool: ThreadPoolExecutor) -> tuple[dict[str, Any], Any]:
        async with Client(mind_mcp(next(iter(minds)), pool)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools["turn"].input_schema, await client.call_tool("turn", arguments)

    minds = Minds.open([scripted])
    try:
        with ThreadPoolExecutor(1) as pool:
            return anyio.run(scenario, minds, pool)
    finally:
        minds.close(10)


def sse(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def logged(cli: Callable[..., Result], home: Path) -> list[dict[str, Any]]:
    result = cli("log", "--limit", "1000", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    events: list[dict[str, Any]] = result.json()
    return events


def started(cli: Callable[..., Result], home: Path) -> dict[str, Any]:
    """The last turn's started event's payload, as `mind log --json` shows it."""
    events = logged(cli, home)
    payload: dict[str, Any] = next(
        e["payload"] for e in reversed(events) if e["type"] == "mind.turn.started"
    )
    return payload


def steady(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in VOLATILE}


def test_each_front_end_records_the_system_prompt_and_sampling_and_answers_the_same_turn(
    homes: dict[str, Path], cli: Callable[..., Result]
) -> None:
    body = {"text": TEXT, "model": "mock", "mock_reply": REPLY}
    chat = {"system": SYSTEM, "sampling": SAMPLING}

    with http_client(homes["http"]) as client:
        plain = client.post("/v1/minds/Echo/turns", json={**body, **chat})
        document = client.get("/openapi.json").json()
    with http_client(homes["stream"]) as client:
        streamed = client.post("/v1/minds/Echo/turns", json={**body, **chat, "stream": True})
    schema, tool = mcp_turn(homes["mcp"], {"text": TEXT, "model": "mock", **chat})
    typed = cli(
        *("turn", TEXT, "--model", "mock", "--mock-reply", REPLY, "--json"),
        *("--system", SYSTEM, *CLI_SAMPLING, "--home", str(homes["cli"])),
    )

    events = sse(streamed.text)
    answers = {
        "http": plain.json(),
        "stream": events[-1][1],
        "mcp": tool.structured_content,
        "cli": typed.json(),
    }
    assert (plain.status_code, streamed.status_code, tool.is_error, typed.exit_code) == (
        200,
        200,
        False,
        0,
    )
    assert [kind for kind, _ in events][-1] == "turn"
    assert "".join(data["text"] for kind, data in events if kind == "delta") == REPLY
    assert answers["http"]["reply"] == REPLY
    for name in PATHS:
        assert steady(answers[name]) == steady(answers["http"]), name
        record = started(cli, homes[name])
        assert (record["system"], record["sampling"]) == (SYSTEM, SAMPLING), name
    turn_body = document["paths"]["/v1/minds/{name}/turns"]["post"]["requestBody"]
    schemas = document["components"]["schemas"]
    ref = turn_body["content"]["application/json"]["schema"]["$ref"]
    fields = schemas[ref.rsplit("/", 1)[1]]["properties"]
    assert fields["system"]["anyOf"][0]["type"] == "string"
    sampling = schemas[fields["sampling"]["anyOf"][0]["$ref"].rsplit("/", 1)[1]]
    assert sampling["type"] == "object" and sampling["additionalProperties"] is False
    temperature = sampling["properties"]["temperature"]["anyOf"][0]
    assert (temperature["minimum"], temperature["maximum"]) == (0, 2)
    assert {"system", "sampling"} <= set(schema["properties"])
    assert schema["$defs"]["Sampling"]["properties"]["top_p"]["anyOf"][0]["maximum"] == 1


def test_a_temperature_out_of_range_is_refused_naming_it_and_records_nothing(
    homes: dict[str, Path], cli: Callable[..., Result]
) -> None:
    before = {name: len(logged(cli, homes[name])) for name in PATHS}
    body = {"text": TEXT, "model": "mock", "mock_reply": REPLY, "system": SYSTEM}
    hot = {"sampling": {"temperature": 5}}

    with http_client(homes["http"]) as client:
        plain = client.post("/v1/minds/Echo/turns", json={**body, **hot})
        unknown = client.post("/v1/minds/Echo/turns", json={**body, "sampling": {"heat": 1}})
    with http_client(homes["stream"]) as client:
        streamed = client.post("/v1/minds/Echo/turns", json={**body, **hot, "stream": True})
    _, tool = mcp_turn(homes["mcp"], {"text": TEXT, "model": "mock", **hot})
    typed = cli(
        *("turn", TEXT, "--model", "mock", "--mock-reply", REPLY),
        *("--temperature", "5", "--home", str(homes["cli"])),
    )

    error = plain.json()["error"]
    assert plain.status_code == 400
    assert (error["param"], error["code"]) == ("sampling.temperature", "bad_request")
    assert error["message"] == "'sampling.temperature' is 5; it must be at most 2"
    assert (unknown.status_code, unknown.json()["error"]["param"]) == (400, "sampling.heat")
    # Checked before a stream starts: a 400, never a 200 with an error event.
    assert (streamed.status_code, streamed.json()["error"]) == (400, error)
    assert tool.is_error and len(tool.content) == 1
    assert tool.content[0].text.startswith("turn: sampling.temperature: ")
    assert "less than or equal to 2" in tool.content[0].text
    assert typed.exit_code == 1
    assert typed.stderr == "Error: --temperature is 5; it must be from 0 to 2\n"
    assert {name: len(logged(cli, homes[name])) for name in PATHS} == before


def test_a_chat_session_sends_its_system_prompt_with_every_turn(
    mind_home: Path, cli: Callable[..., Result]
) -> None:
    result = cli(
        *("chat", "--model", "mock", "--mock-reply", REPLY, "--system", SYSTEM),
        *("--json", "--no-server"),
        input="Capital of France?\nAnd of Italy?\n",
    )

    turns = [json.loads(line) for line in result.output.splitlines() if line]
    records = [e["payload"] for e in logged(cli, mind_home) if e["type"] == "mind.turn.started"]
    assert result.exit_code == 0, result.stderr
    assert [t["reply"] for t in turns] == [REPLY, REPLY]
    assert [(r["system"], r["sampling"]) for r in records] == [(SYSTEM, None), (SYSTEM, None)]
