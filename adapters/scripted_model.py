"""The scripted model (`--model mock --mock-reply TEXT`): answers with the given text, without a
server or a model client, exactly as LiteLLM's `mock_response` answered (what turns on `mock`
ran through until it cost every such process seconds of importing LiteLLM)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from mindledger.domain.model_port import Completion, ModelFailure
from mindledger.domain.redaction import redact, secret_values

# LiteLLM's fixed mock usage (DEFAULT_MOCK_RESPONSE_PROMPT_TOKEN_COUNT and _COMPLETION_): the
# prompt is never counted, so a scripted turn's usage is the same whatever it was asked.
USAGE = {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
CHUNK = 3  # characters per streamed token (LiteLLM's mock_completion_streaming_obj)

# Replies LiteLLM's mock turned into provider errors, with the failure each one became; kept,
# so a scripted reply fails as it always did (a demo of a failing model).
_FAILURES = {
    "litellm.RateLimitError": (
        "rate_limit",
        "the model provider is rate limiting; try later: this is a mock rate limit error",
    ),
    "litellm.ContextWindowExceededError": (
        "context_too_long",
        "the prompt is too long for the model: this is a mock context window exceeded error",
    ),
    "litellm.InternalServerError": (
        "server",
        "the model server failed: this is a mock internal server error",
    ),
}
_CONTENT_FILTER = "Exception: content_filter_policy"  # a prefix: the reply is the error's text
_MID_STREAM = "Exception: mock_streaming_error"  # a prefix
_MID_STREAM_TEXT = "This is a mock error raised mid-stream"


def scripted_failure(reply: str, streaming: bool) -> ModelFailure | None:
    """The failure a scripted `reply` stands for (LiteLLM's mock error replies), or None."""
    if reply in _FAILURES:
        return ModelFailure(*_FAILURES[reply])
    if reply.startswith(_CONTENT_FILTER):
        from mindledger.adapters.litellm_model import provider_reason

        text = provider_reason(redact(reply, secret_values(os.environ.items())))
        return ModelFailure("bad_request", f"the model provider rejected the request: {text}")
    if reply.startswith(_MID_STREAM):
        # Streamed, LiteLLM's stream wrapper repeated the error as the "original exception".
        said = f"{_MID_STREAM_TEXT} Original exception: {_MID_STREAM_TEXT}" if streaming else None
        return ModelFailure("server", f"the model server failed: {said or _MID_STREAM_TEXT}")
    return None


class ScriptedModel:
    """A CompletionModel whose every answer is one scripted text (recorded as model `mock`)."""

    def __init__(self, reply: str) -> None:
        self.reply = reply

    @property
    def name(self) -> str:
        """The spec recorded in the ledger."""
        return "mock"

    def with_sampling(self, sampling: Any) -> ScriptedModel:
        """The same script: a scripted reply is the reply whatever the settings (they are
        recorded with the turn all the same)."""
        return self

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        """The scripted reply, streamed to `on_token` in pieces of three characters when given;
        the messages are not read."""
        started = time.perf_counter()
        failure = scripted_failure(self.reply, streaming=on_token is not None)
        if failure is not None:
            raise failure
        if on_token is not None:
            for start in range(0, len(self.reply), CHUNK):
                on_token(self.reply[start : start + CHUNK])
        if not self.reply.strip():
            raise ModelFailure("empty", "the model returned an empty reply")
        return Completion(
            text=self.reply,
            model=self.name,
            provider="mock",
            usage=dict(USAGE),
            latency_ms=round((time.perf_counter() - started) * 1000, 2),
            finish_reason="stop",
            mock=True,
        )
