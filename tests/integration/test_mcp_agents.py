"""MCP as agents expect it, through the mcp package's own client in-process: hints on every
tool, strict argument schemas with the floor's limits and no test-only arguments, one
structured result per call equal to the floor's result JSON with a text rendering beside it
(never an empty content list), and `isError` with one line on a refused argument and on a
turn whose model failed."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

import mindledger
from mindledger.compose import Home
from mindledger.domain.budgets import RECALL_BUDGET_FLOOR, TURN_BUDGET_FLOOR
from mindledger.service.mcp_server import mind_mcp
from mindledger.service.mcp_tools import UNSCRIPTED_MOCK
from mindledger.service.minds import Minds
from tests.conftest import Result

COMMITMENTS_SQL = "SELECT cid, text FROM commitments ORDER BY cid"
READS: dict[str, tuple[dict[str, Any], Callable[[Any], Any]]] = {
    "recall": ({"query": "weekly report"}, lambda m: m.recall("weekly report")),
    "commitments": ({}, lambda m: m.commitments()),
    "threads": ({}, lambda m: m.threads()),
    "concepts": ({}, lambda m: m.concepts()),
    "identity": ({}, lambda m: m.identity()),
    "query": ({"sql": COMMITMENTS_SQL}, lambda m: m.query(COMMITMENTS_SQL)),
}


@pytest.fixture
def filled(cli: Callable[..., Result], mind_home: Path) -> Path:
    """A mind with a commitment, a concept and a thread."""
    for args in (
        ("commit", "Send the weekly report on Friday"),
        ("concept", "define", "boiler", "The heating unit in the cellar"),
        ("thread", "open", "Which supplier?", "--content", "Two quotes came in for the boiler"),
    ):
        result = cli(*args)
        assert result.exit_code == 0, (args, result.output, result.stderr)
    return mind_home


def session_calls(home: Home, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One in-process client session on the mind at `home`: its tools, and each call's result."""

    async def scenario(minds: Minds, pool: ThreadPoolExecutor) -> dict[str, Any]:
        async with Client(mind_mcp(next(iter(minds)), pool)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return {"tools": tools, "calls": [await client.call_tool(*c) for c in calls]}

    minds = Minds.open([home])
    try:
        with ThreadPoolExecutor(1) as pool:
            return anyio.run(scenario, minds, pool)
    finally:
        minds.close(10)


def one_line(result: Any) -> str:
    """The text of an error result: one block of one line."""
    assert result.is_error and len(result.content) == 1, result.content
    text: str = result.content[0].text
    assert text and "\n" not in text and "Traceback" not in text
    return text


def test_every_tool_has_hints_a_strict_schema_and_gives_the_floors_result(filled: Path) -> None:
    calls = [(name, arguments) for name, (arguments, _) in READS.items()]
    refused: list[tuple[str, dict[str, Any]]] = [
        ("recall", {"query": "report", "api_base": "http://127.0.0.1:9"}),
        ("turn", {"text": "hi", "mock_reply": "Hi."}),
        ("turn", {"text": "hi", "budget": TURN_BUDGET_FLOOR - 1}),
        ("query", {"sql": ""}),
        ("query", {"sql": "DELETE FROM identity"}),
        ("turn", {"text": "hi", "model": "mock"}),  # no script: the server has none
    ]
    empty = [("query", {"sql": "SELECT cid FROM commitments WHERE false"})]

    got = session_calls(Home(filled), calls + refused + empty)

    tools, results = got["tools"], got["calls"]
    with mindledger.open(filled) as mind:
        floor = {
            name: through(mind).model_dump(mode="json") for name, (_, through) in READS.items()
        }
    assert sorted(tools) == sorted([*READS, "turn"])
    for name, tool in tools.items():
        hints = tool.annotations
        assert tool.title and hints.title == tool.title
        assert hints.read_only_hint is (name != "turn") and hints.destructive_hint is False
        assert hints.idempotent_hint is (name != "turn")
        assert hints.open_world_hint is (name == "turn")
        assert tool.input_schema["additionalProperties"] is False and tool.output_schema
    turn_schema = tools["turn"].input_schema
    assert set(turn_schema["properties"]) == {
        *("text", "model", "budget", "include_events", "system", "sampling")
    }
    assert turn_schema["required"] == ["text"] and turn_schema["properties"]["text"]["minLength"]
    assert turn_schema["properties"]["budget"]["minimum"] == TURN_BUDGET_FLOOR
    assert tools["recall"].input_schema["properties"]["budget"]["minimum"] == RECALL_BUDGET_FLOOR
    for (name, _), result in zip(calls, results, strict=False):
        assert not result.is_error, result.content
        wanted = floor[
            name
        ]  # a list is structured under `result` (structured content is an object)
        assert result.structured_content == (
            {"result": wanted} if isinstance(wanted, list) else wanted
        )
        assert [c.type for c in result.content] == ["text"]  # one block, the rows in it
        assert json.loads(result.content[0].text) == wanted
        assert wanted, name  # the mind is filled: each read has something to show
    lines = [one_line(r) for r in results[len(calls) : len(calls) + len(refused)]]
    assert lines[0] == ("recall: unknown argument 'api_base'; this tool takes query, budget")
    assert lines[1].startswith("turn: unknown argument 'mock_reply'")
    assert lines[2] == f"turn: budget {TURN_BUDGET_FLOOR - 1} is too small; give at least 200"
    assert lines[3] == "query: sql is empty; give some text"
    assert "only reads" in lines[4]
    assert lines[5] == f"turn: {UNSCRIPTED_MOCK}"
    nothing = results[-1]
    assert not nothing.is_error and nothing.structured_content == {"result": []}
    assert [c.text for c in nothing.content] == ["no rows"]


def test_a_turn_whose_model_fails_is_an_error_result_and_recorded_failed(mind_home: Path) -> None:
    # The setting scripts the `mock` model (agents are offered no script): a provider error.
    home = Home(mind_home).with_flags(mock_reply=("`mock_reply`", "litellm.InternalServerError"))

    got = session_calls(
        home, [("turn", {"text": "Hello there", "model": "mock"}), ("commitments", {})]
    )

    failed, commitments = got["calls"]
    assert failed.is_error and failed.structured_content["status"] == "failed"
    line, shaped = failed.content[0].text, json.loads(failed.content[1].text)
    assert line.startswith(f"turn {failed.structured_content['turn']} failed (server): ")
    assert "\n" not in line and "recorded failed" in line
    assert shaped == failed.structured_content and shaped["reply"] == ""
    with mindledger.open(mind_home) as mind:
        recorded = mind.query(
            "SELECT status, failure_kind FROM turns WHERE stream_id = $t", {"t": shaped["turn"]}
        )
    assert recorded.model_dump(mode="json") == [{"status": "failed", "failure_kind": "server"}]
    assert commitments.structured_content == {"result": []}
    assert [c.text for c in commitments.content] == ["no open commitments"]


NAMES = [
    *("text", "model", "budget", "include_events", "system", "sampling"),
    *("query", "include_closed", "sql", "x"),
]
VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=12)
    | st.lists(st.none())
    | st.dictionaries(st.sampled_from(["temperature", "stop", "seed", "x"]), st.integers())
)


def test_any_arguments_give_a_result_with_text_and_a_refusal_is_one_line(mind_home: Path) -> None:
    # `model` only as the script the setting gives: another would call a provider.
    home = Home(mind_home).with_flags(mock_reply=("`mock_reply`", "Noted."))
    arguments = st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=6), VALUES, max_size=4)
    tools = st.sampled_from([*READS, "turn"])
    minds = Minds.open([home])

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(tool=tools, given_arguments=arguments)
    def call(tool: str, given_arguments: dict[str, Any]) -> None:
        if "model" in given_arguments:
            given_arguments["model"] = "mock"
        with ThreadPoolExecutor(1) as pool:
            result: Any = anyio.run(
                mind_mcp(next(iter(minds)), pool).call_tool, tool, given_arguments
            )

        assert result.content and all(block.text for block in result.content)
        if result.is_error:
            assert "\n" not in result.content[0].text
            assert "Traceback" not in result.content[0].text
        else:
            assert isinstance(result.structured_content, dict)

    try:
        call()
    finally:
        minds.close(10)
