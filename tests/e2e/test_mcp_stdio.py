"""`mind mcp` over stdio, driven by the mcp package's own client (one process): a turn with a
scripted reply opens a commitment that the resource and the tools then show; hints, reads and
refusals."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import REPO, subprocess_env
from tests.service.serving import MIND, init_home

REPLY = "I will.\nCOMMIT: send Ada the report on Friday\nAnything else?"


@pytest.fixture(scope="module")
def mind_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_home(tmp_path_factory.mktemp("mcp") / "echo", "Echo")


@asynccontextmanager
async def stdio_session(home: Path, log: Path) -> AsyncIterator[ClientSession]:
    """A session with `mind mcp --home HOME` as a child process (killed on exit), its `mock`
    model scripted by the setting (agents are offered no script)."""
    params = StdioServerParameters(
        command=MIND[0],
        args=[*MIND[1:], "mcp", "--home", str(home)],
        env=subprocess_env(home, MIND_MOCK_REPLY=REPLY),
        cwd=str(REPO),
    )
    with log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def as_text(result: Any) -> Any:
    """The turn tool's text content: its JSON object, then (`include_events`) the events."""
    assert not result.is_error, result.content
    return [json.loads(block.text) for block in result.content]


def test_a_turn_opens_a_commitment_that_the_resources_and_the_tools_show_and_refuse_like_the_cli(
    mind_home: Path, tmp_path: Path
) -> None:
    async def scenario() -> dict[str, Any]:
        async with stdio_session(mind_home, tmp_path / "stderr.log") as session:
            tools = await session.list_tools()
            resources = await session.list_resources()
            said = await session.call_tool(
                "turn", {"text": "Will you send Ada the report?", "include_events": True}
            )
            resource = await session.read_resource("mind://commitments/open")
            identity = await session.read_resource("mind://identity")
            return {
                "tools": {t.name: t for t in tools.tools},
                "resources": sorted(str(r.uri) for r in resources.resources),
                "turn": as_text(said),
                "turn_json": structured(said),
                "resource": json.loads(resource.contents[0].text),  # type: ignore[union-attr]
                "listed": structured(await session.call_tool("commitments", {})),
                "identity": json.loads(identity.contents[0].text),  # type: ignore[union-attr]
                "identity_tool": structured(await session.call_tool("identity", {})),
                "query": await session.call_tool(
                    "query", {"sql": "SELECT count(*) AS n FROM identity"}
                ),
                "write": await session.call_tool("query", {"sql": "DELETE FROM identity"}),
                "recall": await session.call_tool("recall", {"query": "report"}),
                "threads": await session.call_tool("threads", {}),
                "scripted": await session.call_tool("turn", {"text": "hi", "mock_reply": "Hi."}),
                "unknown": await session.call_tool("turn", {"text": "hi", "model": "nosuch"}),
            }

    got = anyio.run(scenario)

    tools = got["tools"]
    assert sorted(tools) == [
        "commitments", "concepts", "identity", "query", "recall", "threads", "turn"
    ]  # fmt: skip
    assert [n for n, t in tools.items() if t.annotations.read_only_hint] == [
        n for n in tools if n != "turn"
    ]
    assert {"api_base", "mock_reply"}.isdisjoint(tools["turn"].input_schema["properties"])
    assert got["resources"] == ["mind://commitments/open", "mind://identity"]
    # A text-only client reads the structured content itself: the names `mind turn --json` uses.
    (turn, events), turn_json = got["turn"], got["turn_json"]
    assert turn == turn_json
    assert turn["reply"] == "I will.\nAnything else?" and turn["reply_raw"] == REPLY
    assert turn["status"] == "complete" and turn["failure"] is None
    assert len(turn["opened"]) == 1 and turn["closed"] == [] and turn["identity"]["name"] == "Echo"
    assert [e["position"] for e in events] == list(
        range(turn["events"]["first"], turn["events"]["last"] + 1)
    )
    assert "mind.commitment.opened" in [e["type"] for e in events]
    opened = [c for c in got["resource"] if c["cid"] == turn["opened"][0]]
    assert opened and opened[0]["text"] == "send Ada the report on Friday"
    assert [c["cid"] for c in got["listed"]["result"]] == [c["cid"] for c in got["resource"]]
    assert got["identity"]["name"] == "Echo" and got["identity_tool"] == got["identity"]
    assert structured(got["query"]) == {"result": [{"n": 1}]}
    assert got["write"].is_error and "only reads" in got["write"].content[0].text
    assert set(structured(got["recall"])) == {"items", "tokens", "dropped", "vectors"}
    assert "result" in structured(got["threads"])
    assert got["scripted"].is_error and got["scripted"].content[0].text.startswith(
        "turn: unknown argument 'mock_reply'"
    )
    # A refusal from the floor is named by its tool as an argument's refusal is.
    unknown = got["unknown"]
    assert unknown.is_error and len(unknown.content) == 1
    assert unknown.content[0].text.startswith("turn: ") and "'nosuch'" in unknown.content[0].text
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()


def test_mcp_on_a_folder_without_a_mind_is_one_error_line_and_no_protocol_output(
    cli: Callable[..., Any],
) -> None:
    result = cli("mcp")

    assert result.exit_code == 1 and result.output == ""
    assert result.stderr.startswith("Error: no mind at ") and "Traceback" not in result.stderr
