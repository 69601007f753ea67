"""The LiteLLM adapter: the only module that imports litellm, lazily and offline."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from domain.model_port import Completion, ModelFailure
from domain.redaction import redact, secret_values


def import_litellm() -> Any:
    """Import litellm with its network look-ups switched off (it fetches a price list otherwise)."""
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


@dataclass
class ModelSettings:
    """How to call one model."""

    spec: str
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    retries: int = 0
    fallbacks: list[str] = field(default_factory=list)
    max_tokens: int = 512
    temperature: float = 0.0
    mock_reply: str | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    stop: list[str] = field(default_factory=list)  # stop sequences (none: the model's own end)


def _failure(e: Exception, litellm: Any, secrets: list[str]) -> ModelFailure:
    ex = litellm.exceptions
    # Redacted before it is cut: a provider may quote the request's key back.
    text = redact(" ".join(str(e).split()), secrets)[:500]
    table: list[tuple[type[BaseException], str, str]] = [
        (ex.ContextWindowExceededError, "context_too_long", "the prompt is too long for the model"),
        (ex.AuthenticationError, "auth", "the model provider refused the API key"),
        (ex.PermissionDeniedError, "auth", "the model provider denied access"),
        (ex.RateLimitError, "rate_limit", "the model provider is rate limiting; try later"),
        (ex.Timeout, "timeout", "the model did not answer in time"),
        (ex.APIConnectionError, "connection", "cannot connect to the model server"),
        (ex.NotFoundError, "bad_request", "the model or endpoint was not found"),
        (ex.BadRequestError, "bad_request", "the model provider rejected the request"),
    ]
    for kind_cls, kind, message in table:
        if isinstance(e, kind_cls):
            return ModelFailure(kind, f"{message}: {text}")
    cause = e.__cause__ or e.__context__
    if isinstance(cause, ConnectionError) or "Connection" in text or "connect" in text.lower():
        return ModelFailure("connection", f"cannot connect to the model server: {text}")
    return ModelFailure("server", f"the model server failed: {text}")


class LiteLLMModel:
    """A CompletionModel for any LiteLLM model string (openai/..., anthropic/..., ollama/...)."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings

    @property
    def name(self) -> str:
        """The spec recorded in the ledger (`mock` for scripted replies)."""
        return "mock" if self.settings.mock_reply is not None else self.settings.spec

    def _call_args(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        s = self.settings
        args: dict[str, Any] = {
            "model": s.spec,
            "messages": messages,
            "timeout": s.timeout,
            "max_tokens": s.max_tokens,
            "temperature": s.temperature,
            "num_retries": s.retries,
        }
        if s.mock_reply is not None:
            # LiteLLM runs its whole path without a server; the model must name a provider.
            args.update(model="openai/mock", mock_response=s.mock_reply)
        if s.api_base:
            args["api_base"] = s.api_base
            args["api_key"] = s.api_key or os.environ.get("OPENAI_API_KEY") or "local"
            args["max_retries"] = s.retries  # the OpenAI SDK retries twice on its own otherwise
        elif s.api_key:
            args["api_key"] = s.api_key
        if s.fallbacks:
            args["fallbacks"] = s.fallbacks
        if s.extra_body:
            args["extra_body"] = s.extra_body
        if s.stop:
            args["stop"] = s.stop
        return args

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        """Answer through LiteLLM, streaming tokens to `on_token` when given."""
        litellm = import_litellm()
        args = self._call_args(messages)
        started = time.perf_counter()
        try:
            if on_token is None:
                response = litellm.completion(**args)
                choice = response.choices[0]
                text = choice.message.content or ""
                finish = choice.finish_reason or "stop"
                usage = response.usage
            else:
                text, finish, usage = self._stream(litellm, args, on_token)
        except ModelFailure:
            raise
        except Exception as e:  # a process boundary: every provider error becomes one failure
            secrets = [*secret_values(os.environ.items()), self.settings.api_key or ""]
            raise _failure(e, litellm, secrets) from e
        latency = (time.perf_counter() - started) * 1000
        if not text.strip():
            raise ModelFailure("empty", "the model returned an empty reply")
        # A reply cut off at max_tokens (finish "length") is still a reply: the turn keeps it and
        # marks it cut off. An empty one is a failure.
        provider = "mock" if self.settings.mock_reply is not None else self._provider()
        return Completion(
            text=text,
            model=self.name,
            provider=provider,
            usage={
                k: int(getattr(usage, k, 0) or 0)
                for k in ("prompt_tokens", "completion_tokens", "total_tokens")
            },
            latency_ms=round(latency, 2),
            finish_reason=finish,
            mock=self.settings.mock_reply is not None,
        )

    def _stream(
        self, litellm: Any, args: dict[str, Any], on_token: Callable[[str], None]
    ) -> tuple[str, str, Any]:
        parts: list[str] = []
        finish, usage = "stop", None
        for chunk in litellm.completion(
            **args, stream=True, stream_options={"include_usage": True}
        ):
            if getattr(chunk, "usage", None):
                usage = chunk.usage
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta.content or ""
            if delta:
                parts.append(delta)
                on_token(delta)
            finish = chunk.choices[0].finish_reason or finish
        return "".join(parts), finish, usage

    def _provider(self) -> str:
        if self.settings.spec.startswith("local/"):
            return "local"
        return self.settings.spec.split("/", 1)[0] if "/" in self.settings.spec else "openai"
