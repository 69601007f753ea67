"""`POST /v1/completions` as OpenAI's legacy clients call it: the real SDK's
`completions.create`, plain and streamed, gets the turn's reply as `choices[0].text` with usage
and the turn record; what a turn cannot honour is a 400 naming the field that records nothing,
and a setting the floor refuses is named as the request's field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.service.openai_sdk import MOCK, SCRIPTED, Served, serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory)


def test_a_prompt_is_a_turn_whose_reply_is_the_completions_text(served: Served) -> None:
    answer = served.sdk().completions.create(
        model="mind/Echo", prompt=["Say hello."], temperature=0.2, max_tokens=40, extra_body=MOCK
    )

    record = answer.model_extra["mind_turn"]  # type: ignore[index]
    assert answer.object == "text_completion" and answer.model == "mind/Echo"
    assert answer.id == f"cmpl-{record['turn']}"
    assert answer.choices[0].text == SCRIPTED["mock_reply"] == record["reply"]
    assert (answer.choices[0].index, answer.choices[0].finish_reason) == (0, "stop")
    assert answer.usage is not None and answer.usage.total_tokens == record["usage"]["total_tokens"]
    started = served.started()
    assert (started["text"], started["system"]) == ("Say hello.", None)
    assert started["sampling"] == {"temperature": 0.2, "max_tokens": 40}


def test_a_streamed_completion_gives_the_reply_in_pieces_then_the_usage(served: Served) -> None:
    chunks = list(
        served.sdk().completions.create(
            model="mind/Echo",
            prompt="Say hello.",
            stream=True,
            stream_options={"include_usage": True},
            extra_body=MOCK,
        )
    )

    texts = [c.choices[0].text for c in chunks if c.choices]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert "".join(texts) == SCRIPTED["mock_reply"] and len(texts) > 2
    assert finishes[-1] == "stop" and set(finishes[:-1]) == {None}
    assert {c.object for c in chunks} == {"text_completion"}
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-2].model_extra["mind_turn"]["reply"] == SCRIPTED["mock_reply"]  # type: ignore[index]
    turn = chunks[-2].model_extra["mind_turn"]["turn"]  # type: ignore[index]
    assert {c.id for c in chunks} == {f"cmpl-{turn}"}  # named after its turn, as a whole one


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"suffix": " the end"}, "suffix"),
        ({"echo": True}, "echo"),
        ({"logprobs": 2}, "logprobs"),
        ({"best_of": 3}, "best_of"),
        ({"n": 2}, "n"),
        ({"logit_bias": {"50256": -100}}, "logit_bias"),
        ({"prompt": ["one", "two"]}, "prompt"),
        ({"prompt": [15496, 11]}, "prompt"),
        ({"prompt": "  "}, "prompt"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "messages"),
        ({"model": "gpt-3.5-turbo-instruct"}, "model"),
        ({"temperature": 7}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_what_a_turn_cannot_honour_is_a_400_naming_the_field_and_records_nothing(
    served: Served, fields: dict[str, Any], param: str, stream: bool
) -> None:
    before = served.head()
    body = {"model": "mind/Echo", "prompt": "Say hello.", "stream": stream, **MOCK, **fields}

    answer = served.client.post("/v1/completions", json=body, headers=served.auth)

    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    error = answer.json()["error"]
    assert (error["param"], error["type"]) == (param, "invalid_request_error")
    assert served.head() == before


def test_the_sdk_hears_a_refusal_as_its_bad_request_error(served: Served) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        served.sdk().completions.create(
            model="mind/Echo", prompt="Say hello.", best_of=2, extra_body=MOCK
        )

    assert refused.value.body["param"] == "best_of"  # type: ignore[index]
    assert "one reply" in refused.value.body["message"]  # type: ignore[index]


@pytest.mark.parametrize("stream", [False, True])
def test_a_transient_failed_generation_is_a_503_with_the_turn_record_never_a_stream(
    served: Served, stream: bool
) -> None:
    failing = {"mind_options": {"model": "mock", "mock_reply": "litellm.RateLimitError"}}
    body = {"model": "mind/Echo", "prompt": "Say hello.", "stream": stream, **failing}

    answer = served.client.post("/v1/completions", json=body, headers=served.auth)

    assert answer.status_code == 503  # a retry may pass: the SDKs retry it, as an attempt
    assert answer.headers["retry-after"]
    assert answer.json()["error"]["code"] == "model_unavailable"
    assert answer.json()["mind_turn"]["failure"]["kind"] == "rate_limit"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "route, field", [("/v1/completions", "prompt"), ("/v1/responses", "input")]
)
def test_a_retried_request_is_answered_from_its_turn_not_a_second_turn(
    served: Served, route: str, field: str, stream: bool
) -> None:
    body = {"model": "mind/Echo", field: f"Remember {route} {stream}", "stream": stream, **MOCK}
    first = served.client.post(route, json=body, headers=served.auth)
    head = served.head()

    # The OpenAI SDKs mark a retry so, and send the same body again.
    retry = {**served.auth, "x-stainless-retry-count": "1"}
    again = served.client.post(route, json=body, headers=retry)

    assert first.status_code == again.status_code == 200
    assert served.head() == head  # nothing written: the recorded answer
    assert "Hello there, friend." in again.text
    if not stream:
        assert again.headers["idempotent-replayed"] == "true"
