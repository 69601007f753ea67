"""The LiteLLM adapter: the only module that imports litellm, lazily and offline."""

from __future__ import annotations

import os
import re
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mindledger.adapters.model_settings import ModelSettings as ModelSettings
from mindledger.adapters.model_tools import add_piece, check_tooling, tool_calls_of
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.identity import DEFAULT_MODEL
from mindledger.domain.model_port import Completion, ModelFailure
from mindledger.domain.redaction import redact, secret_values, url_secrets
from mindledger.domain.text import clean_text

if TYPE_CHECKING:
    from mindledger.domain.sampling import Sampling
    from mindledger.domain.tool_use import ToolRequest


def import_litellm() -> Any:
    """Import litellm with its network look-ups switched off (it fetches a price list otherwise)."""
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


EMBEDDED_SPEC = DEFAULT_MODEL


def check_model_spec(spec: str) -> str:
    """`spec` cleaned, if turns can run on it: `mock`, `local/NAME` (the embedded model), or
    `PROVIDER/MODEL` with a provider LiteLLM knows. Imports litellm (seconds): only for setting
    a model, never on a read path."""
    spec = clean_text(spec, "model", 200, single_line=True)
    provider, slash, name = spec.partition("/")
    if spec == "mock":
        return spec
    if provider == "local" and name.strip():
        from mindledger.adapters.local_model import unknown_local_model

        unknown = unknown_local_model(spec)
        if unknown is None:
            return spec
        raise InvalidInputError(
            f"unknown model {spec!r}: the local model is {EMBEDDED_SPEC} (set it with "
            f"mind model set {EMBEDDED_SPEC}); other models are provider/model"
        )
    if slash and name.strip() and provider in {str(p) for p in _providers()}:
        return spec
    raise InvalidInputError(
        f"unknown model {spec!r}: give provider/model with a provider LiteLLM knows "
        "(openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, ollama/llama3.2, ...) or mock; "
        f"back to the embedded model: mind model set {EMBEDDED_SPEC}"
    )


def check_routable(spec: str, api_base: str | None = None) -> None:
    """Raise InvalidInputError unless LiteLLM can tell which provider serves `spec` (with
    `api_base`, as a call would be made): a typo is refused before a turn records anything,
    not after, as the provider library's prose. Imports litellm (seconds): only for a model
    about to be called through it."""
    reason = unroutable(spec, api_base)
    if reason is not None:
        raise InvalidInputError(f"{reason}, so nothing was recorded: {ROUTABLE_HINT}")


ROUTABLE_HINT = (
    "give provider/model (openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
    f"ollama/llama3.2, ...), mock, or the embedded model {EMBEDDED_SPEC}"
)


def unroutable(spec: str, api_base: str | None = None) -> str | None:
    """Why LiteLLM cannot route `spec` to a provider, or None when it can."""
    litellm = import_litellm()
    try:
        _, provider, _, _ = litellm.get_llm_provider(model=spec, api_base=api_base)
    except Exception:  # LiteLLM's own refusal (BadRequestError and kin): it cannot route it
        provider = None
    name = spec.partition("/")[2] if "/" in spec else spec  # `openai/` routes, to nothing
    if provider and name.strip():
        return None
    return f"LiteLLM cannot route model {spec!r}"


def _providers() -> list[str]:
    litellm = import_litellm()
    return [getattr(p, "value", p) for p in litellm.provider_list]


# The settings a caller may choose that LiteLLM takes as they are (the others: temperature,
# max_tokens and stop, which every call sends).
PASSED_AS_IS = ("top_p", "seed", "presence_penalty", "frequency_penalty", "user")


def check_sampling(spec: str, sampling: Sampling) -> None:
    """Raise InvalidInputError naming the first of a caller's settings that LiteLLM does not
    pass to `spec`'s provider (it drops some without a word: `user` for an OpenAI-compatible
    server that is not OpenAI's own model, `seed` for Anthropic). Imports litellm."""
    litellm = import_litellm()
    try:
        model, provider, _, _ = litellm.get_llm_provider(model=spec)
        supported = set(
            litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or ()
        )
    except Exception:  # LiteLLM cannot tell: the call itself will say what fails
        return
    for name in sampling.chosen():
        if name not in supported:
            raise InvalidInputError(
                f"model {spec} does not take `{name}` (LiteLLM would not pass it to that "
                "provider); leave it out",
                param=name,
            )


def sampled_settings(settings: ModelSettings, sampling: Sampling) -> ModelSettings:
    """`settings` with a caller's sampling settings in place of the home's."""
    chosen = sampling.chosen()
    if "stop" in chosen:
        chosen["stop"] = list(chosen["stop"])
    return replace(settings, **chosen)


# A provider error's text as LiteLLM words it: class names ("litellm.AuthenticationError:",
# "OpenAIException -"), sometimes a whole Python traceback with file paths. None of it helps a user.
_CLASS_NAME = re.compile(r"\b(?:[a-z_]+\.)*[A-Z]\w*(?:Error|Exception)\b\s*(?:[:-]\s*)?")
_FRAME = re.compile(r"File \"[^\"]*\", line \d+(?:, in \S+)?")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+-]+){2,}\.py\w?\b(?::\d+)?")
# LiteLLM appends a bug-report or docs link; a server on this machine (the loopback model
# server, an --api-base) is the user's own and is kept.
_URL = re.compile(r"\b(?:https?|wss?)://[^\s<>\"'`]+", re.IGNORECASE)
_OWN_URL = re.compile(
    r"^[a-z]+://(?:[^@/\s]*@)?(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?:[:/?#]|$)"
)
MAX_REASON = 300  # characters of the provider's own words kept in a failure message
# Errors inside the chain that mean the server answered but not in the expected shape.
_MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError)


def provider_reason(text: str) -> str:
    """A provider error's text as one short line: no traceback, frames, paths, class names or
    URLs but loopback ones."""
    text = text.split("Traceback (most recent call last)", 1)[0]
    text = _PATH.sub("", _FRAME.sub("", text))
    text = _URL.sub(lambda m: m.group() if _OWN_URL.match(m.group()) else "", text)
    text = _CLASS_NAME.sub("", text)
    text = " ".join(text.split()).strip(" :-")
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1].rstrip() + "…"


def _causes(e: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    cause: BaseException | None = e
    while cause is not None and cause not in chain and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    return chain


def _is_connection(cause: BaseException) -> bool:
    if isinstance(cause, (ConnectionError, TimeoutError)):
        return True
    module = type(cause).__module__.split(".")[0]
    return module in ("httpx", "httpcore") and "Connect" in type(cause).__name__


def _failure(e: Exception, litellm: Any, secrets: list[str]) -> ModelFailure:
    ex = litellm.exceptions
    # Redacted before it is cut: a provider may quote the request's key back.
    text = provider_reason(redact(str(e), secrets))
    table: list[tuple[type[BaseException], str, str]] = [
        (ex.ContextWindowExceededError, "context_too_long", "the prompt is too long for the model"),
        (ex.AuthenticationError, "auth", "the model provider refused the API key"),
        (ex.PermissionDeniedError, "auth", "the model provider denied access"),
        (ex.RateLimitError, "rate_limit", "the model provider is rate limiting; try later"),
        (ex.Timeout, "timeout", "the model did not answer in time"),
        (ex.NotFoundError, "bad_request", "the model or endpoint was not found"),
        (ex.BadRequestError, "bad_request", "the model provider rejected the request"),
    ]
    found = _known_failure(e, table)
    if found is None:
        causes = _causes(e)
        if any(_is_connection(c) for c in causes):
            found = ("connection", "cannot connect to the model server")
        elif any(isinstance(c, _MALFORMED) for c in causes) or "Invalid response" in text:
            found = ("bad_response", "the model server's answer was not in the expected form")
            missing = [c for c in causes if isinstance(c, KeyError)]
            if missing and text == provider_reason(str(missing[0])):
                text = f"no field {text} in it"  # a bare KeyError says only the key
        elif isinstance(e, ex.APIConnectionError) or "connect" in text.lower():
            found = ("connection", "cannot connect to the model server")
        else:
            found = ("server", "the model server failed")
    kind, message = found
    return ModelFailure(kind, f"{message}: {text}" if text else message)


def _known_failure(
    e: Exception, table: list[tuple[type[BaseException], str, str]]
) -> tuple[str, str] | None:
    for kind_cls, kind, message in table:
        if isinstance(e, kind_cls):
            return kind, message
    return None


class LiteLLMModel:
    """A CompletionModel for any LiteLLM model string (openai/..., anthropic/..., ollama/...)."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings

    @property
    def name(self) -> str:
        """The spec recorded in the ledger (`mock` for scripted replies)."""
        return "mock" if self.settings.mock_reply is not None else self.settings.spec

    def with_sampling(self, sampling: Sampling) -> LiteLLMModel:
        """This model calling with a caller's sampling settings (refused, naming the first,
        when its provider does not take one)."""
        if self.settings.mock_reply is None:
            check_sampling(self.settings.spec, sampling)
        return LiteLLMModel(sampled_settings(self.settings, sampling))

    def with_tools(self, request: ToolRequest) -> LiteLLMModel:
        """This model calling with a caller's tools and response format (refused, naming the
        model and the first, when LiteLLM does not pass one to its provider)."""
        if self.settings.mock_reply is None:
            check_tooling(self.settings.spec, request)
        return LiteLLMModel(replace(self.settings, tooling=request.chosen()))

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
            # LiteLLM's own mock: turns on `mock` use adapters/scripted_model.py; this stays as
            # the reference tests compare it with. The model must name a provider.
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
        for name in PASSED_AS_IS:
            if getattr(s, name) is not None:
                args[name] = getattr(s, name)
        args.update(s.tooling)
        return args

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        """Answer through LiteLLM, streaming tokens to `on_token` when given."""
        litellm = import_litellm()
        args = self._call_args(messages)
        started = time.perf_counter()
        try:
            # LiteLLM and pydantic warn on stderr about a provider's odd answer; the failure (or
            # the reply) says what matters.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if on_token is None:
                    response = litellm.completion(**args)
                    choice = response.choices[0]
                    text = choice.message.content or ""
                    finish = choice.finish_reason or "stop"
                    usage = response.usage
                    calls = tool_calls_of(getattr(choice.message, "tool_calls", None))
                else:
                    text, finish, usage, calls = self._stream(litellm, args, on_token)
            if not isinstance(text, str):
                raise TypeError(f"the reply's content is {type(text).__name__}, not text")
        except ModelFailure:
            raise
        except Exception as e:  # a process boundary: every provider error becomes one failure
            secrets = [
                *secret_values(os.environ.items()),
                self.settings.api_key or "",
                *url_secrets(self.settings.api_base or ""),  # a Basic header's user:password
            ]
            raise _failure(e, litellm, secrets) from e
        latency = (time.perf_counter() - started) * 1000
        if not text.strip() and not calls:
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
            tool_calls=calls,
        )

    def _stream(
        self, litellm: Any, args: dict[str, Any], on_token: Callable[[str], None]
    ) -> tuple[str, str, Any, tuple[dict[str, Any], ...]]:
        parts: list[str] = []
        calls: dict[int, dict[str, Any]] = {}  # index -> the call as its pieces add up
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
            for piece in getattr(chunk.choices[0].delta, "tool_calls", None) or ():
                add_piece(calls, piece)
            finish = chunk.choices[0].finish_reason or finish
        return "".join(parts), finish, usage, tool_calls_of([calls[i] for i in sorted(calls)])

    def _provider(self) -> str:
        if self.settings.spec.startswith("local/"):
            return "local"
        return self.settings.spec.split("/", 1)[0] if "/" in self.settings.spec else "openai"
