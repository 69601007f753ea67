"""The OpenAI-compatible endpoint on a real `mind serve` process, driven by the official openai
client: models per token, a turn from the last user message, streaming and not, errors in
OpenAI's shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.service.serving import Server, init_home, start_server

REPLY = "I will water them.\nCOMMIT: water the plants daily\nAnything else?"
VISIBLE = "I will water them.\nAnything else?"
MOCK = {"mind_options": {"model": "mock", "mock_reply": REPLY}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("openai")
    running = start_server([init_home(root / "echo", "Echo"), init_home(root / "nova", "Nova")])
    try:
        yield running
    finally:
        running.kill()


def client(server: Server, token: str = "") -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{server.url}/v1", api_key=token or server.token(), max_retries=0, timeout=120
    )


def started_texts(server: Server) -> list[str]:
    log = server.request("GET", "/v1/minds/Echo/log?limit=200").json()
    return [e["payload"]["text"] for e in log if e["type"] == "mind.turn.started"]


def test_each_mind_the_key_opens_is_a_model(server: Server) -> None:
    echo = [m.id for m in client(server).models.list()]
    nova = [m.id for m in client(server, server.token(server.homes[1])).models.list()]

    assert (echo, nova) == (["mind/Echo"], ["mind/Nova"])


def test_a_completion_is_a_turn_on_the_last_user_message(server: Server) -> None:
    messages: list[Any] = [
        {"role": "system", "content": "ignored"},
        {"role": "user", "content": "an earlier question"},
        {"role": "assistant", "content": "an earlier answer"},
        {"role": "user", "content": [{"type": "text", "text": "Will you water the plants?"}]},
    ]

    answer = client(server).chat.completions.create(
        model="mind/Echo", messages=messages, extra_body=MOCK
    )

    turn = (answer.model_extra or {})["mind_turn"]
    assert answer.choices[0].message.content == VISIBLE == turn["reply"]
    assert answer.choices[0].finish_reason == "stop" and answer.model == "mind/Echo"
    assert answer.usage is not None and answer.usage.total_tokens == turn["usage"]["total_tokens"]
    assert len(turn["opened"]) == 1 and turn["status"] == "complete"
    assert started_texts(server)[-1] == "Will you water the plants?"
    assert "an earlier question" not in started_texts(server)


def test_a_streamed_completion_sends_the_visible_reply_then_the_turn(server: Server) -> None:
    stream = client(server).chat.completions.create(
        model="mind/Echo",
        messages=[{"role": "user", "content": "Stream it"}],
        stream=True,
        extra_body=MOCK,
    )
    chunks = list(stream)

    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    final = chunks[-1]
    turn = (final.model_extra or {})["mind_turn"]
    assert "".join(pieces) == VISIBLE == turn["reply"]
    assert len([p for p in pieces if p]) > 1
    assert not any("COMMIT" in p or "water the plants daily" in p for p in pieces)
    assert final.choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)  # not asked for
    assert {c.id for c in chunks} == {f"chatcmpl-{turn['turn']}"}  # the turn's, as a whole one


def test_a_streamed_completion_asked_for_usage_ends_with_a_usage_chunk(server: Server) -> None:
    stream = client(server).chat.completions.create(
        model="mind/Echo",
        messages=[{"role": "user", "content": "Stream it with usage"}],
        stream=True,
        stream_options={"include_usage": True},
        extra_body=MOCK,
    )
    chunks = list(stream)

    last, finish = chunks[-1], chunks[-2]
    turn = (finish.model_extra or {})["mind_turn"]
    assert last.choices == [] and last.usage is not None
    assert last.usage.total_tokens == turn["usage"]["total_tokens"]
    assert finish.choices[0].finish_reason == "stop" and finish.usage is None


def test_errors_come_in_openai_shape_and_record_nothing(server: Server) -> None:
    before = started_texts(server)
    user = [{"role": "user", "content": "hi"}]

    with pytest.raises(openai.NotFoundError) as unknown:
        client(server).chat.completions.create(model="mind/Nobody", messages=user, extra_body=MOCK)
    with pytest.raises(openai.NotFoundError) as other:
        client(server).chat.completions.create(model="mind/Nova", messages=user, extra_body=MOCK)
    with pytest.raises(openai.BadRequestError) as no_user:
        client(server).chat.completions.create(
            model="mind/Echo", messages=[{"role": "system", "content": "x"}], extra_body=MOCK
        )
    with pytest.raises(openai.BadRequestError) as no_reply:
        client(server).chat.completions.create(
            model="mind/Echo", messages=user, extra_body={"mind_options": {"model": "mock"}}
        )
    with pytest.raises(openai.AuthenticationError):
        client(server, "not-a-token").models.list()

    assert unknown.value.code == other.value.code == "model_not_found"
    assert no_user.value.code == "invalid_messages"
    assert '"mock_reply"' in str(no_reply.value.message)  # the request's field, not a CLI flag
    assert started_texts(server) == before


def test_an_unreachable_model_answers_503_with_the_recorded_turn(server: Server) -> None:
    options = {"model": "openai/gpt-4o-mini", "api_base": "http://127.0.0.1:9/v1"}

    with pytest.raises(openai.InternalServerError) as failed:
        client(server).chat.completions.create(
            model="mind/Echo",
            messages=[{"role": "user", "content": "Anyone there?"}],
            extra_body={"mind_options": options},
        )

    body = failed.value.body
    assert failed.value.status_code == 503 and isinstance(body, dict)
    assert body["code"] == "model_unavailable"
    assert failed.value.response.headers["retry-after"] == "1"
    assert started_texts(server)[-1] == "Anyone there?"


@pytest.mark.parametrize(
    "extra",
    [
        {"n": 2},
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
        {"tool_choice": "required", "tools": [{"type": "function", "function": {"name": "f"}}]},
        {"response_format": {"type": "json_object"}},
    ],
    ids=["n", "tools", "tool_choice", "response_format"],
)
def test_what_a_turn_cannot_honour_is_refused_not_ignored(
    server: Server, extra: dict[str, Any]
) -> None:
    # The scripted model takes no tools and no response format (a model that does gets them:
    # tests/e2e/test_openai_tools.py).
    before = started_texts(server)

    with pytest.raises(openai.BadRequestError) as refused:
        client(server).chat.completions.create(
            model="mind/Echo",
            messages=[{"role": "user", "content": "hi"}],
            extra_body={**MOCK, **extra},
        )

    assert refused.value.code == "unsupported_parameter"
    assert started_texts(server) == before


def test_an_image_part_is_refused_not_dropped(server: Server) -> None:
    before = started_texts(server)
    parts = [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]

    with pytest.raises(openai.BadRequestError) as refused:
        client(server).chat.completions.create(
            model="mind/Echo", messages=[{"role": "user", "content": parts}], extra_body=MOCK
        )

    assert refused.value.code == "unsupported_content"
    assert started_texts(server) == before


def test_text_parts_and_a_text_response_format_are_a_turn(server: Server) -> None:
    parts = [{"type": "text", "text": "water "}, {"type": "text", "text": "the ferns"}]

    done = client(server).chat.completions.create(
        model="mind/Echo",
        messages=[{"role": "user", "content": parts}],
        n=1,
        response_format={"type": "text"},
        extra_body=MOCK,
    )

    assert done.choices[0].message.content == VISIBLE
    assert started_texts(server)[-1] == "water the ferns"
