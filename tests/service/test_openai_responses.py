"""`POST /v1/responses` as the OpenAI Agents SDK calls it: the real SDK's `responses.create`,
plain and streamed, and its `responses.stream` helper get the turn's reply as `output_text`;
`instructions` and the input's system, user and assistant items (the SDK's own output item
passed back too) reach the turn as chat's do; the event stream is numbered in order; what a
turn cannot honour (tools for a model without them, a hosted tool, `previous_response_id`,
`store`, ...) is a 400 naming the field that records nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.service.openai_sdk import MOCK, SCRIPTED, Served, serve

REPLY = SCRIPTED["mock_reply"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory)


def test_the_input_and_instructions_are_a_turn_whose_reply_is_the_output_text(
    served: Served,
) -> None:
    earlier = served.sdk().responses.create(model="mind/Echo", input="I am Nadia.", extra_body=MOCK)
    items: Any = [
        {"role": "developer", "content": "Greet the user by name."},
        {"role": "user", "content": [{"type": "input_text", "text": "I am Nadia."}]},
        *[item.model_dump() for item in earlier.output],
        {"role": "user", "content": "Say hello."},
    ]

    answer = served.sdk().responses.create(
        model="mind/Echo",
        instructions="Answer in French.",
        input=items,
        temperature=0.3,
        max_output_tokens=60,
        extra_body=MOCK,
    )

    record = answer.model_extra["mind_turn"]  # type: ignore[index]
    assert answer.output_text == REPLY == record["reply"]
    assert (answer.object, answer.status, answer.model) == ("response", "completed", "mind/Echo")
    assert answer.id == f"resp_{record['turn']}"
    assert (answer.temperature, answer.max_output_tokens) == (0.3, 60)
    assert answer.usage is not None and answer.usage.total_tokens == record["usage"]["total_tokens"]
    sent = [m["content"] for m in served.echo.turn_prompt(record["turn"]).messages or []]
    assert "> Answer in French.\n> \n> Greet the user by name.\n</client-instructions>" in sent[0]
    assert sent[1:] == ["I am Nadia.", REPLY, "Say hello."]
    started = served.started()
    assert started["system"] == "Answer in French.\n\nGreet the user by name."
    assert started["sampling"] == {"temperature": 0.3, "max_tokens": 60}


def test_a_streamed_response_sends_the_event_sequence_the_sdk_expects(served: Served) -> None:
    events = list(
        served.sdk().responses.create(
            model="mind/Echo",
            input=[{"role": "user", "content": "Say hello."}],
            stream=True,
            extra_body=MOCK,
        )
    )

    kinds = [e.type for e in events]
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert "".join(deltas) == REPLY and len(deltas) > 2
    final = events[-1].response  # type: ignore[union-attr]
    assert final.output_text == REPLY and final.id == events[0].response.id  # type: ignore[union-attr]
    assert final.usage is not None and final.usage.output_tokens > 0
    assert final.id == f"resp_{final.model_extra['mind_turn']['turn']}"  # the turn's, from start


def test_the_sdks_stream_helper_assembles_the_final_response(served: Served) -> None:
    with served.sdk().responses.stream(
        model="mind/Echo", input="Say hello.", extra_body=MOCK
    ) as stream:
        texts = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()

    assert "".join(texts) == final.output_text == REPLY


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"tools": [{"type": "function", "name": "f", "parameters": {}}]}, "tools"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"previous_response_id": "resp_123"}, "previous_response_id"),
        ({"store": True}, "store"),
        ({"reasoning": {"effort": "low"}}, "reasoning"),
        ({"text": {"format": {"type": "json_object"}}}, "text.format"),  # the mock takes none
        ({"tools": [{"type": "web_search"}]}, "tools[0].type"),
        ({"stream_options": {"include_obfuscation": True}, "stream": True}, "stream_options"),
        (
            {"input": [{"type": "function_call_output", "call_id": "c", "output": "4"}]},
            "input[0]",  # a result of a call no turn made
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
            "input[0].content",
        ),
        (
            {"input": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hi."}]},
            "input",
        ),
        ({"input": [{"role": "tool", "content": "4"}]}, "input[0].role"),
        ({"input": ""}, "input"),
        ({"messages": []}, "messages"),
        ({"model": "gpt-4o"}, "model"),
        ({"temperature": 5}, "temperature"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"instructions": "x" * 200_000}, "instructions"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_what_a_turn_cannot_honour_is_a_400_naming_the_field_and_records_nothing(
    served: Served, fields: dict[str, Any], param: str, stream: bool
) -> None:
    before = served.head()
    body = {"model": "mind/Echo", "input": "Say hello.", "stream": stream, **MOCK, **fields}

    answer = served.client.post("/v1/responses", json=body, headers=served.auth)

    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["error"]["param"] == param
    assert served.head() == before


@pytest.mark.parametrize("stream", [False, True])
def test_a_transient_failed_generation_is_a_503_with_the_turn_record_never_a_stream(
    served: Served, stream: bool
) -> None:
    failing = {"mind_options": {"model": "mock", "mock_reply": "litellm.InternalServerError"}}
    body = {"model": "mind/Echo", "input": "Say hello.", "stream": stream, **failing}

    answer = served.client.post("/v1/responses", json=body, headers=served.auth)

    assert answer.status_code == 503  # a retry may pass: the SDKs retry it, as an attempt
    assert answer.headers["retry-after"]
    assert answer.json()["error"]["code"] == "model_unavailable"
    assert answer.json()["mind_turn"]["status"] == "failed"


def test_a_turn_that_fails_after_its_first_text_ends_the_stream_as_response_failed(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mindledger.service.openai_responses as route
    from mindledger.service.turn_stream import StreamError, TurnNews

    async def failing_after_text(*args: Any) -> Any:
        async def news() -> Any:
            yield "Hel"
            yield StreamError("generation failed (server): the model server failed", "model_failed")

        return TurnNews("0" * 32, news())

    monkeypatch.setattr(route, "streamed_turn", failing_after_text)

    events = list(
        served.sdk().responses.create(
            model="mind/Echo", input="Say hello.", stream=True, extra_body=MOCK
        )
    )

    assert [e.type for e in events][-2:] == ["response.output_text.delta", "response.failed"]
    failed = events[-1].response  # type: ignore[union-attr]
    assert failed.status == "failed" and failed.error is not None
    assert failed.error.message.startswith("generation failed (server)")
    assert failed.output_text == "Hel"
