"""LangChain's `ChatOpenAI` (the real langchain-openai) uses a served mind as it would any
OpenAI-compatible model: `base_url=…/v1`, `model="mind/Echo"`, the mind's key, nothing else.
Plain and streamed, the client's system message and settings reach the upstream model and the
ledger; with `bind_tools`, the model's tool call comes back in OpenAI's shape, and the `tool`
message sent back starts a turn linked to the turn that asked, which gets the final answer; the
same through the Responses API (`use_responses_api=True`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from tests.service.live_mind import Live, serve_live
from tests.service.tool_provider import ANSWER, ARGUMENTS

SYSTEM = "Answer like a ship's captain."
STOP = ["\n\n"]
QUOTED = f"> {SYSTEM}\n</client-instructions>"  # the client's system prompt, quoted after ours


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    yield from serve_live(tmp_path_factory)


def chat(live: Live, **settings: Any) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=live.base_url, api_key=live.key, model="mind/Echo", max_retries=0, **settings
    )  # type: ignore[call-arg]


@tool
def get_weather(city: str) -> str:
    """The weather in a city now."""
    return f'{{"city": "{city}", "celsius": 18, "sky": "sunny"}}'


def test_a_plain_call_brings_the_system_message_and_settings_to_the_model(live: Live) -> None:
    llm = chat(live, temperature=0.2, max_tokens=50, seed=7, stop=STOP)

    answer = llm.invoke([SystemMessage(SYSTEM), HumanMessage("Where are we headed?")])

    sent = live.upstream[-1]
    assert answer.content == "Plain."
    assert answer.response_metadata["finish_reason"] == "stop"
    assert answer.usage_metadata is not None and answer.usage_metadata["total_tokens"] == 13
    assert sent["messages"][0]["role"] == "system" and QUOTED in sent["messages"][0]["content"]
    assert sent["messages"][-1] == {"role": "user", "content": "Where are we headed?"}
    assert (sent["temperature"], sent["max_tokens"], sent["seed"]) == (0.2, 50, 7)
    assert sent["stop"] == STOP
    started = live.events("mind.turn.started")[-1]
    assert started["system"] == SYSTEM
    assert started["sampling"] == {"temperature": 0.2, "max_tokens": 50, "seed": 7, "stop": STOP}
    assert answer.response_metadata["id"] == f"chatcmpl-{started['id']}"


def test_a_streamed_call_adds_up_to_the_recorded_reply(live: Live) -> None:
    llm = chat(live, temperature=0.5, stream_usage=True)

    chunks = list(llm.stream([SystemMessage(SYSTEM), HumanMessage("Any land in sight?")]))

    sent = live.upstream[-1]
    text = "".join(str(c.content) for c in chunks)
    assert text == "Plain." and len([c for c in chunks if c.content]) > 1
    assert sent["stream"] is True and sent["temperature"] == 0.5
    assert QUOTED in sent["messages"][0]["content"]
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage and usage[-1]["total_tokens"] == 13
    replied = live.events("mind.turn.replied")[-1]
    assert replied["reply"] == text


def test_bind_tools_round_trip_links_the_tool_turn_to_the_asking_turn(live: Live) -> None:
    llm = chat(live).bind_tools([get_weather])
    question = HumanMessage("What is the weather in Paris?")

    asked = llm.invoke([SystemMessage(SYSTEM), question])
    assert isinstance(asked, AIMessage)
    call = asked.tool_calls[0]
    result = get_weather.invoke(call["args"])
    answered = llm.invoke(
        [SystemMessage(SYSTEM), question, asked, ToolMessage(result, tool_call_id=call["id"])]
    )

    offered, sent = live.upstream[-2], live.upstream[-1]
    assert asked.response_metadata["finish_reason"] == "tool_calls"
    assert (call["name"], call["args"]) == ("get_weather", {"city": "Paris"})
    assert offered["tools"][0]["function"]["name"] == "get_weather"
    assert answered.content == ANSWER
    assert sent["messages"][-1] == {"role": "tool", "tool_call_id": call["id"], "content": result}
    assert sent["messages"][-2]["tool_calls"][0]["id"] == call["id"]
    assert sent["messages"][-2]["tool_calls"][0]["function"]["arguments"] == ARGUMENTS
    first, second = live.events("mind.turn.started")[-2:]
    assert second["follows"] == first["id"]
    assert call["id"].startswith(f"call_{first['id']}")
    assert second["tool_results"] == [{"tool_call_id": call["id"], "content": result}]
    assert live.events("mind.turn.replied")[-2]["tool_calls"][0]["id"] == call["id"]
    assert live.mind.verify().ok


def test_through_the_responses_api_too(live: Live) -> None:
    llm = chat(live, use_responses_api=True, temperature=0.1).bind_tools([get_weather])
    question = HumanMessage("What is the weather in Paris?")

    asked = llm.invoke([SystemMessage(SYSTEM), question])
    assert isinstance(asked, AIMessage)
    call = asked.tool_calls[0]
    answered = llm.invoke([question, asked, ToolMessage("18C", tool_call_id=call["id"])])

    offered = live.upstream[-2]
    assert (call["name"], call["args"]) == ("get_weather", {"city": "Paris"})
    assert QUOTED in offered["messages"][0]["content"] and offered["temperature"] == 0.1
    assert answered.text == ANSWER
    first, second = live.events("mind.turn.started")[-2:]
    assert second["follows"] == first["id"]
    assert second["tool_results"] == [{"tool_call_id": call["id"], "content": "18C"}]
