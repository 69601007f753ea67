"""A provider's failure reads as one short human line: no traceback, no class names, no
warnings on stderr, and a malformed answer is its own kind."""

from __future__ import annotations

import socket
import warnings

import pytest

from mindledger.adapters.litellm_model import MAX_REASON, LiteLLMModel, ModelSettings
from mindledger.domain.model_port import FAILURE_KINDS, ModelFailure
from tests.integration.fake_provider import failing_provider, recording_provider

HELLO = [{"role": "user", "content": "hello"}]


def failure_of(spec: str, base: str) -> ModelFailure:
    model = LiteLLMModel(ModelSettings(spec=spec, api_base=base, api_key="x"))
    with pytest.raises(ModelFailure) as raised:
        model.complete(HELLO)
    return raised.value


def assert_one_human_line(message: str) -> None:
    assert "\n" not in message and "Traceback" not in message and 'File "' not in message
    assert ".py" not in message and "litellm." not in message
    assert "Exception" not in message and "Error:" not in message
    assert len(message) <= MAX_REASON + 80


@pytest.mark.parametrize(
    ("spec", "content"),
    [("anthropic/claude-3-5-haiku-latest", "an OpenAI-shaped reply"), ("openai/fake", 123)],
)
def test_a_malformed_answer_is_a_bad_response_in_one_line_without_warnings(
    spec: str, content: object
) -> None:
    with (
        recording_provider(reply=content) as (base, requests),
        warnings.catch_warnings(record=True) as warned,
    ):
        warnings.simplefilter("always")
        failure = failure_of(spec, base)

    assert len(requests) == 1
    assert failure.kind == "bad_response" and failure.kind in FAILURE_KINDS
    assert failure.message.startswith("the model server's answer was not in the expected form")
    assert_one_human_line(failure.message)
    assert [str(w.message) for w in warned] == []


def test_a_refused_key_reads_without_the_provider_class_names() -> None:
    with failing_provider(401) as base:
        failure = failure_of("openai/fake", base)

    assert failure.kind == "auth"
    assert_one_human_line(failure.message)
    assert "fake provider says 401" in failure.message


def test_a_refused_connection_stays_a_connection_failure_in_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    failure = failure_of("openai/fake", f"http://127.0.0.1:{port}/v1")

    assert failure.kind == "connection"
    assert_one_human_line(failure.message)
