"""LangGraph's prebuilt ReAct agent (the real langgraph, `create_react_agent`) with a served
mind as its model: the mind's model calls the agent's tool, the agent runs it and sends the
result back, and the mind's next turn, linked to the one that asked, gives the final answer.
The agent's prompt reaches the upstream model; the ledger holds both turns and verifies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from tests.service.live_mind import Live, serve_live
from tests.service.tool_provider import ANSWER

PROMPT = "You are a weather assistant; use the tools."
RESULT = '{"celsius": 18, "sky": "sunny"}'


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    yield from serve_live(tmp_path_factory)


@tool
def get_weather(city: str) -> str:
    """The weather in a city now."""
    asked.append(city)
    return RESULT


asked: list[str] = []


# LangGraph 1.x points to langchain's create_agent as the newer way; the prebuilt agent is
# the one agent code written for LangGraph uses, so it is the one tested.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_the_react_agent_calls_a_tool_through_the_mind_and_answers(live: Live) -> None:
    from langgraph.prebuilt import create_react_agent

    model = ChatOpenAI(  # type: ignore[call-arg]
        base_url=live.base_url, api_key=live.key, model="mind/Echo", max_retries=0, temperature=0
    )
    agent = create_react_agent(model, [get_weather], prompt=PROMPT)

    state: dict[str, Any] = agent.invoke({"messages": [("user", "What is the weather in Paris?")]})

    messages = state["messages"]
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    calling, result, final = messages[1], messages[2], messages[3]
    assert isinstance(calling, AIMessage) and isinstance(result, ToolMessage)
    assert asked == ["Paris"] and result.content == RESULT
    assert final.content == ANSWER and not final.tool_calls
    offered, sent = live.upstream[-2], live.upstream[-1]
    for body in (offered, sent):
        assert f"> {PROMPT}\n</client-instructions>" in body["messages"][0]["content"]
        assert body["temperature"] == 0 and body["tools"][0]["function"]["name"] == "get_weather"
    call_id = calling.tool_calls[0]["id"]
    assert sent["messages"][-1] == {"role": "tool", "tool_call_id": call_id, "content": RESULT}
    first, second = live.events("mind.turn.started")[-2:]
    assert (first["text"], first["system"]) == ("What is the weather in Paris?", PROMPT)
    assert second["follows"] == first["id"]
    assert second["tool_results"] == [{"tool_call_id": call_id, "content": RESULT}]
    replies = live.events("mind.turn.replied")[-2:]
    assert replies[0]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert replies[1]["reply"] == ANSWER
    verified = live.mind.verify()
    assert verified.ok and verified.events == live.mind.status().head.position
