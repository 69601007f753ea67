"""Tools and structured output through the official openai client, against the served mind
in-process, whose model is a loopback upstream speaking OpenAI's API (through LiteLLM): a
request with tools gets the model's tool calls back, whole and streamed; the next request's
tool result reaches the model and gets the final answer, in a turn linked to the one that
asked, both turns' calls and results in the ledger; a response format reaches the model; a
model LiteLLM gives no tools is refused with a 400 naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from starlette.testclient import TestClient

import mindledger
from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.minds import Minds
from mindledger.service.openai_api import extension
from tests.service.tool_provider import ANSWER, ARGUMENTS, FORMATTED, tool_provider

WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city now.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
QUESTION: Any = {"role": "user", "content": "What is the weather in Paris?"}
RESULT = '{"celsius": 18, "sky": "sunny"}'

Upstream = tuple[str, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with tool_provider() as served:
        yield served


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str]]:
    home = tmp_path_factory.mktemp("tools") / "mind"
    mindledger.init(home, name="Echo")
    minds = Minds.open([Home(Path(home))])
    app = build_app(minds, extensions=[extension(minds)])
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, next(iter(minds)).token
    minds.close(10)


def sdk(served: tuple[TestClient, str]) -> openai.OpenAI:
    client, token = served
    return openai.OpenAI(
        base_url="http://testserver/v1", api_key=token, max_retries=0, http_client=client
    )


def through(upstream: Upstream, model: str = "openai/upstream") -> dict[str, Any]:
    return {"mind_options": {"model": model, "api_base": upstream[0]}}


def ledger(served: tuple[TestClient, str]) -> list[dict[str, Any]]:
    client, token = served
    auth = {"Authorization": f"Bearer {token}"}
    return client.get("/v1/minds/Echo/log?limit=500", headers=auth).json()  # type: ignore[no-any-return]


def payloads(served: tuple[TestClient, str], topic: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in ledger(served) if e["type"] == topic]


def test_tool_calls_come_back_and_the_result_gets_the_final_answer(
    served: tuple[TestClient, str], upstream: Upstream
) -> None:
    client = sdk(served)

    asked = client.chat.completions.create(
        model="mind/Echo", messages=[QUESTION], tools=[WEATHER], extra_body=through(upstream)
    )
    offered = upstream[1][-1]
    message = asked.choices[0].message
    assert message.tool_calls is not None
    call = message.tool_calls[0]
    answered = client.chat.completions.create(
        model="mind/Echo",
        messages=[
            QUESTION,
            message,  # type: ignore[list-item]  # the SDK's own message, passed back as it came
            {"role": "tool", "tool_call_id": call.id, "content": RESULT},
        ],
        tools=[WEATHER],
        extra_body=through(upstream),
    )
    sent = upstream[1][-1]["messages"]

    assert asked.choices[0].finish_reason == "tool_calls" and message.content is None
    assert call.type == "function" and call.function.name == "get_weather"
    assert call.function.arguments == ARGUMENTS
    assert offered["tools"] == [WEATHER]
    assert answered.choices[0].message.content == ANSWER
    assert answered.choices[0].finish_reason == "stop"
    assert sent[-1] == {"role": "tool", "tool_call_id": call.id, "content": RESULT}
    assert sent[-2]["tool_calls"][0]["id"] == call.id and sent[-3] == QUESTION
    first, second = asked.model_extra["mind_turn"], answered.model_extra["mind_turn"]  # type: ignore[index]
    assert second["follows"] == first["turn"] and call.id.startswith(f"call_{first['turn']}")
    assert payloads(served, "mind.turn.replied")[-2]["tool_calls"][0]["id"] == call.id
    started = payloads(served, "mind.turn.started")[-1]
    assert started["tool_results"] == [{"tool_call_id": call.id, "content": RESULT}]


def test_streamed_tool_calls_come_in_pieces_and_the_result_streams_the_answer(
    served: tuple[TestClient, str], upstream: Upstream
) -> None:
    client = sdk(served)

    chunks: list[Any] = list(
        client.chat.completions.create(
            model="mind/Echo",
            messages=[QUESTION],
            tools=[WEATHER],
            stream=True,
            extra_body=through(upstream),
        )
    )
    pieces = [p for c in chunks if c.choices for p in c.choices[0].delta.tool_calls or ()]
    call_id = next(p.id for p in pieces if p.id)
    arguments = "".join(p.function.arguments or "" for p in pieces if p.function)
    finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
    answer: Any = client.chat.completions.create(
        model="mind/Echo",
        messages=[
            QUESTION,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": RESULT},
        ],
        tools=[WEATHER],
        stream=True,
        extra_body=through(upstream),
    )
    text = "".join(c.choices[0].delta.content or "" for c in answer if c.choices)

    assert finish == "tool_calls" and arguments == ARGUMENTS and len(pieces) == 2
    assert upstream[1][-2]["stream"] is True and upstream[1][-2]["tools"] == [WEATHER]
    assert text == ANSWER and upstream[1][-1]["messages"][-1]["tool_call_id"] == call_id


def test_a_json_schema_response_format_reaches_the_model(
    served: tuple[TestClient, str], upstream: Upstream
) -> None:
    schema = {
        "name": "weather",
        "schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "strict": True,
    }
    response_format: Any = {"type": "json_schema", "json_schema": schema}

    answer = sdk(served).chat.completions.create(
        model="mind/Echo",
        messages=[QUESTION],
        response_format=response_format,
        extra_body=through(upstream),
    )

    assert upstream[1][-1]["response_format"] == response_format
    assert json.loads(answer.choices[0].message.content or "") == json.loads(FORMATTED)
    assert payloads(served, "mind.turn.started")[-1]["tooling"] == {
        "response_format": response_format
    }


def test_a_model_without_tools_is_refused_naming_it_and_records_nothing(
    served: tuple[TestClient, str], upstream: Upstream
) -> None:
    before = len(ledger(served))

    with pytest.raises(openai.BadRequestError) as refused:
        sdk(served).chat.completions.create(
            model="mind/Echo",
            messages=[QUESTION],
            tools=[WEATHER],
            extra_body=through(upstream, "ollama/llama3.2"),
        )

    error = refused.value.body
    assert isinstance(error, dict) and error["code"] == "unsupported_parameter"
    assert error["param"] == "tools" and "ollama/llama3.2" in error["message"]
    assert len(ledger(served)) == before
    client, token = served
    verified = client.post(
        "/v1/minds/Echo/verify", json={}, headers={"Authorization": f"Bearer {token}"}
    )
    assert verified.json()["ok"] is True
