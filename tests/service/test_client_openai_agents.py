"""The OpenAI Agents SDK (the real openai-agents) runs an agent on a served mind through
`/v1/responses`, its default API: plain text, and with a function tool, whole and streamed.
The agent's instructions and model settings reach the upstream model and the ledger; the
model's tool call comes back as a `function_call` item, the SDK runs the tool, and its output
starts a turn linked to the turn that asked, which gives the final answer; an output type is
the response format the model answers in. Tracing is off (it would export to OpenAI)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from agents import (
    Agent,
    ModelSettings,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI
from pydantic import BaseModel

from tests.service.live_mind import Live, serve_live
from tests.service.tool_provider import ANSWER

INSTRUCTIONS = "You are a terse weather assistant."
QUOTED = f"> {INSTRUCTIONS}\n</client-instructions>"
RESULT = '{"celsius": 18, "sky": "sunny"}'
asked: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city now."""
    asked.append(city)
    return RESULT


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    set_tracing_disabled(True)
    yield from serve_live(tmp_path_factory)


def agent(live: Live, **options: Any) -> Agent[Any]:
    client = AsyncOpenAI(base_url=live.base_url, api_key=live.key, max_retries=0)
    model = OpenAIResponsesModel(model="mind/Echo", openai_client=client)
    return Agent(name="Weather", instructions=INSTRUCTIONS, model=model, **options)


def test_an_agent_gets_the_minds_text_and_its_settings_reach_the_model(live: Live) -> None:
    settings = ModelSettings(temperature=0.3, max_tokens=40)

    result = asyncio.run(Runner.run(agent(live, model_settings=settings), "Good morning."))

    sent = live.upstream[-1]
    assert result.final_output == "Plain."
    assert QUOTED in sent["messages"][0]["content"]
    assert sent["messages"][-1] == {"role": "user", "content": "Good morning."}
    assert (sent["temperature"], sent["max_tokens"]) == (0.3, 40)
    started = live.events("mind.turn.started")[-1]
    assert (started["text"], started["system"]) == ("Good morning.", INSTRUCTIONS)
    assert started["sampling"] == {"temperature": 0.3, "max_tokens": 40}
    assert result.raw_responses[-1].response_id == f"resp_{started['id']}"


def check_tool_round_trip(live: Live, result: Any) -> None:
    """The agent asked, ran the tool, sent its output, and got the final answer, in two turns
    of the ledger, the second linked to the first."""
    offered, sent = live.upstream[-2], live.upstream[-1]
    assert result.final_output == ANSWER and asked[-1] == "Paris"
    assert offered["tools"][0]["function"]["name"] == "get_weather"
    assert QUOTED in offered["messages"][0]["content"] and QUOTED in sent["messages"][0]["content"]
    call_id = sent["messages"][-2]["tool_calls"][0]["id"]
    assert sent["messages"][-1] == {"role": "tool", "tool_call_id": call_id, "content": RESULT}
    first, second = live.events("mind.turn.started")[-2:]
    assert first["text"] == "What is the weather in Paris?"
    assert second["follows"] == first["id"] and call_id.startswith(f"call_{first['id']}")
    assert second["tool_results"] == [{"tool_call_id": call_id, "content": RESULT}]
    assert live.events("mind.turn.replied")[-1]["reply"] == ANSWER
    assert live.mind.verify().ok


def test_an_agent_calls_a_function_tool_through_the_mind(live: Live) -> None:
    weather = agent(live, tools=[get_weather])

    result = asyncio.run(Runner.run(weather, "What is the weather in Paris?"))

    calls = [i for i in result.new_items if i.type == "tool_call_item"]
    outputs = [i for i in result.new_items if i.type == "tool_call_output_item"]
    assert len(calls) == 1 and len(outputs) == 1 and outputs[0].output == RESULT
    check_tool_round_trip(live, result)


def test_a_streamed_agent_run_calls_the_tool_and_streams_the_answer(live: Live) -> None:
    weather = agent(live, tools=[get_weather])

    async def run() -> tuple[Any, list[Any]]:
        streamed = Runner.run_streamed(weather, "What is the weather in Paris?")
        events = [e async for e in streamed.stream_events()]
        return streamed, events

    result, events = asyncio.run(run())

    raw = [e.data.type for e in events if e.type == "raw_response_event"]
    assert "response.function_call_arguments.delta" in raw
    assert "response.output_text.delta" in raw and raw.count("response.completed") == 2
    assert live.upstream[-1]["stream"] is True and live.upstream[-2]["stream"] is True
    check_tool_round_trip(live, result)


class Weather(BaseModel):
    city: str
    celsius: int


def test_an_agents_output_type_is_the_response_format_the_model_answers_in(live: Live) -> None:
    result = asyncio.run(Runner.run(agent(live, output_type=Weather), "Paris now, as data."))

    sent = live.upstream[-1]["response_format"]
    assert result.final_output == Weather(city="Paris", celsius=18)
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"]["properties"].keys() == {"city", "celsius"}
    started = live.events("mind.turn.started")[-1]
    assert started["tooling"]["response_format"] == sent
