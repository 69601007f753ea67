"""The scripted model (`--model mock --mock-reply TEXT`) answers as LiteLLM's `mock_response`
answered, which turns on `mock` ran through before: the same text, pieces, usage, finish
reason, names and failures, measured against LiteLLM itself in this process."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings
from mindledger.adapters.scripted_model import ScriptedModel
from mindledger.domain.model_port import ModelFailure

MESSAGES = [
    {"role": "system", "content": "You are Echo."},
    {"role": "user", "content": "Will you water the plants while I am away for a week?"},
]
REPLIES = [
    "hi",
    "Sure.\nCOMMIT: water the plants daily",
    "héllo 🎉 wörld\r\n",
    "  leading and trailing  ",
    "",
    "   \n ",
    "<think>unclosed",
    # The replies LiteLLM's mock turns into provider errors.
    "litellm.RateLimitError",
    "litellm.ContextWindowExceededError",
    "litellm.InternalServerError",
    "Exception: content_filter_policy: the reply was filtered",
    "Exception: mock_streaming_error",
    "Exception: mock_streaming_error, and then some",
    # Near misses are plain replies.
    "litellm.RateLimitError ",
    "litellm.Timeout",
    "Exception: something else",
]


def answer(model: Any, streamed: bool) -> dict[str, Any]:
    """What a turn keeps of a completion (or its failure), and the pieces heard."""
    heard: list[str] = []
    try:
        c = model.complete([dict(m) for m in MESSAGES], heard.append if streamed else None)
    except ModelFailure as e:
        return {"failure": (type(e).__name__, e.kind, e.message), "heard": heard}
    return {
        "completion": (c.text, c.model, c.provider, c.finish_reason, c.mock, c.cut_off),
        "usage": c.usage,
        "heard": heard,
    }


def litellm_mock(reply: str) -> LiteLLMModel:
    return LiteLLMModel(ModelSettings(spec="mock", mock_reply=reply))


@pytest.mark.parametrize("reply", REPLIES)
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_scripted_reply_answers_as_litellms_mock_answered(reply: str, streamed: bool) -> None:
    expected = answer(litellm_mock(reply), streamed)
    if "usage" in expected:
        # LiteLLM's stream estimated usage with a tokenizer; the scripted model reports its
        # fixed usage streamed or not (a streamed turn records what the whole one records).
        expected["usage"] = answer(litellm_mock(reply), streamed=False)["usage"]

    got = answer(ScriptedModel(reply), streamed)

    assert got == expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=40))
def test_any_text_streams_in_the_pieces_litellms_mock_streamed(reply: str) -> None:
    expected = answer(litellm_mock(reply), streamed=True)
    expected.pop("usage", None)

    got = answer(ScriptedModel(reply), streamed=True)
    got.pop("usage", None)

    assert got == expected


def test_the_usage_does_not_depend_on_the_prompt_as_with_litellms_mock() -> None:
    prompts = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "word " * 5000}]]

    usages = [ScriptedModel("ok").complete(p).usage for p in prompts]

    assert usages == [litellm_mock("ok").complete(p).usage for p in prompts]
    assert usages[0] == usages[1]
