"""MCP over streamable HTTP on a real `mind serve` process (`/mcp/{name}`), with the mcp
package's own client: the bearer token decides which mind a client reaches."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.service.serving import Server, init_home, start_server

REPLY = "Noted.\nCOMMIT: water the plants daily\nCLOSE: nosuch done"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("mcp-http")
    homes = [init_home(root / "echo", "Echo"), init_home(root / "nova", "Nova")]
    # The setting scripts the `mock` model (agents are offered no script).
    running = start_server(homes, MIND_MOCK_REPLY=REPLY)
    try:
        yield running
    finally:
        running.kill()


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def test_a_turn_over_http_opens_a_commitment_the_resource_and_the_tool_show(
    server: Server,
) -> None:
    async def scenario() -> dict[str, Any]:
        async with http_session(f"{server.url}/mcp/Echo", server.token()) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            result = await session.call_tool("turn", {"text": "The plants?"})
            resource = await session.read_resource("mind://commitments/open")
            return {
                "tools": tools,
                "turn": result,
                "resource": json.loads(resource.contents[0].text),  # type: ignore[union-attr]
                "listed": await session.call_tool("commitments", {}),
                "refused": await session.call_tool("turn", {"text": "Hi", "api_base": "x"}),
            }

    got = anyio.run(scenario)

    result, commitments = got["turn"], got["resource"]
    assert not result.is_error, result.content
    assert len(result.content) == 1  # no `include_events`: the one JSON block
    turn = json.loads(result.content[0].text)  # the structured content, `mind turn --json`
    assert turn == result.structured_content
    assert turn["reply"] == "Noted." and turn["status"] == "complete"
    assert [f["line"] for f in turn["rejections"]] == ["CLOSE: nosuch done"]
    assert turn["identity"]["name"] == "Echo"
    assert [c["text"] for c in commitments if c["cid"] in turn["opened"]] == [
        "water the plants daily"
    ]
    assert got["listed"].structured_content == {"result": commitments}
    turn_tool = got["tools"]["turn"]
    assert turn_tool.annotations.read_only_hint is False and turn_tool.annotations.title
    assert got["tools"]["commitments"].annotations.read_only_hint is True
    assert {"api_base", "mock_reply"}.isdisjoint(turn_tool.input_schema["properties"])
    assert got["refused"].is_error and got["refused"].content[0].text.startswith(
        "turn: unknown argument 'api_base'"
    )


def test_a_token_reaches_its_own_mind_only(server: Server) -> None:
    nova_token = server.token(server.homes[1])

    async def own_mind() -> Any:
        async with http_session(f"{server.url}/mcp", nova_token) as session:
            return json.loads(
                (await session.read_resource("mind://identity")).contents[0].text  # type: ignore[union-attr]
            )

    identity = anyio.run(own_mind)
    other = server.request("POST", "/mcp/Echo", {}, token=nova_token)
    missing = server.request("POST", "/mcp/Echo", {}, token=None)

    assert identity["name"] == "Nova"
    assert (other.status, other.json()["error"]["code"]) == (404, "unknown_mind")
    assert (missing.status, missing.json()["error"]["code"]) == (401, "unauthorized")
