"""A chat completion request read as the floor's turn (`service/chat_request.py`): every field
maps onto a turn argument or is refused naming it; any JSON body at all is one or the other,
never an exception of another kind."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.service.chat_request import KNOWN, chat_request
from mindledger.service.errors import ApiError

USER = {"role": "user", "content": "Say hello."}


def test_a_full_request_becomes_the_turns_arguments() -> None:
    body = {
        "model": "mind/Echo",
        "messages": [
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "My name is Nadia."},
            {"role": "assistant", "content": "Noted.", "refusal": None, "tool_calls": None},
            {"role": "developer", "content": "Be terse."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Say "}, {"type": "text", "text": "hi"}],
            },
        ],
        "max_completion_tokens": 20,
        "temperature": 0.2,
        "n": 1,
        "stream": False,
        "mind_options": {"model": "mock", "mock_reply": "Salut."},
    }

    request = chat_request(body)

    assert request.text == "Say hi"
    assert request.turn_args() == {
        "model": "mock",
        "mock_reply": "Salut.",
        "system": "Answer in French.\n\nBe terse.",
        "history": [
            {"role": "user", "content": "My name is Nadia."},
            {"role": "assistant", "content": "Noted."},
        ],
        "via": "/v1/chat/completions",
        "sampling": {"max_tokens": 20, "temperature": 0.2},
    }
    assert request.request_field("history[1]") == "messages[2].content"
    assert request.request_field("max_tokens") == "max_completion_tokens"
    assert request.request_field("system") == "messages[0].content"
    assert request.request_field("budget") == "mind_options.budget"


def test_tool_results_that_end_the_messages_are_the_turns_message() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    body = {
        "model": "mind/Echo",
        "messages": [
            {"role": "system", "content": "Use the tools."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call], "refusal": None},
            {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
            {"role": "tool", "tool_call_id": "call_2", "content": ""},
        ],
        "tools": tools,
        "tool_choice": "auto",
        "response_format": {"type": "json_object"},
    }

    request = chat_request(body)

    assert request.text == ""
    assert request.turn_args() == {
        "system": "Use the tools.",
        "history": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ],
        "via": "/v1/chat/completions",
        "tools": tools,
        "tool_choice": "auto",
        "response_format": {"type": "json_object"},
        "tool_results": [
            {"tool_call_id": "call_1", "content": "18C"},
            {"tool_call_id": "call_2", "content": ""},
        ],
    }
    assert request.request_field("tool_results[1]") == "messages[4].content"
    assert request.request_field("history[1].tool_calls") == "messages[2].tool_calls"


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"temprature": 1}, "temprature"),
        ({"n": 3}, "n"),
        ({"functions": [{"name": "get_weather"}]}, "functions"),
        ({"messages": [{"role": "function", "content": "x", "name": "f"}]}, "messages[0].role"),
        ({"messages": [USER, {"role": "assistant", "content": None}]}, "messages[1].content"),
        ({"stream": "yes"}, "stream"),
        ({"stream_options": {"include_usage": True}}, "stream_options"),
        ({"messages": [USER, {"role": "assistant", "content": "x"}]}, "messages"),
        ({"messages": [{"role": "user", "content": None}]}, "messages[0].content"),
        ({"messages": [{"role": "system", "content": "x", "name": "n"}]}, "messages[0].name"),
        ({"messages": [{"role": "user", "content": "x", "weight": 1}]}, "messages[0]"),
        ({"mind_options": {"budget": "big"}}, "mind_options.budget"),
        ({"model": "gpt-4o"}, "model"),
    ],
)
def test_a_field_a_turn_cannot_take_is_refused_by_name(extra: dict[str, Any], param: str) -> None:
    body = {"model": "mind/Echo", "messages": [USER], **extra}

    with pytest.raises(ApiError) as refused:
        chat_request(body)

    assert refused.value.status == 400 and refused.value.param == param


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "x"]), "content": JSON}
)


@given(
    st.dictionaries(st.sampled_from(sorted(KNOWN)), JSON, max_size=5),
    st.lists(MESSAGE | JSON, max_size=4),
)
def test_any_body_is_read_or_refused_with_a_400(
    fields: dict[str, Any], messages: list[Any]
) -> None:
    body = {"model": "mind/Echo", **fields, "messages": messages}

    try:
        request = chat_request(body)
    except ApiError as e:
        assert e.status == 400 and e.message
    else:
        assert request.text.strip()


def test_a_speakers_name_goes_with_its_message_to_the_floor() -> None:
    """Several agents' messages, each named (LangGraph, AutoGen): the floor checks the name."""
    body = {
        "model": "mind/Echo",
        "messages": [
            {"role": "user", "content": "Plan it.", "name": "planner"},
            {"role": "assistant", "content": "Step one.", "name": "researcher"},
            {"role": "user", "content": "Go on.", "name": "critic-2"},
        ],
    }

    request = chat_request(body)

    assert request.turn_args()["name"] == "critic-2"
    assert [m.get("name") for m in request.history] == ["planner", "researcher"]
    assert request.request_field("name") == "messages[2].name"
    assert request.request_field("history[1].name") == "messages[1].name"
