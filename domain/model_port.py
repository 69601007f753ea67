"""The model boundary as the domain sees it: a port that completes a conversation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mindledger.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from mindledger.domain.sampling import Sampling


@dataclass(frozen=True)
class Completion:
    """A complete reply and what it cost."""

    text: str
    model: str
    provider: str
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0
    finish_reason: str = "stop"
    mock: bool = False
    # The tools the reply calls, in OpenAI's shape ({"id", "type": "function", "function":
    # {"name", "arguments"}}); a reply that calls tools may have no text.
    tool_calls: tuple[dict[str, Any], ...] = ()

    @property
    def cut_off(self) -> bool:
        """Whether the reply stopped at the token limit rather than where the model ended it."""
        return self.finish_reason == "length"


class ModelFailure(Exception):
    """Raised when a model call fails; `kind` is one of FAILURE_KINDS."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


FAILURE_KINDS = (
    "connection",
    "timeout",
    "auth",
    "rate_limit",
    "server",
    "context_too_long",
    "empty",
    "truncated",  # no longer raised (a cut-off reply is kept); old turns may carry it
    "not_installed",
    "bad_request",
    "bad_response",  # the server answered, but not in the shape the provider API promises
)


class CompletionModel(Protocol):
    """Anything that can answer a list of chat messages.

    A model may also have `compact_prompt` (True for a small model: the short protocol),
    `memory_budget` (the most memory tokens its context has room for; see `prompt_fit`) and
    `with_sampling(sampling)` (the same model calling with a caller's settings; see `sampled`)
    and `with_tools(request)` (calling with a caller's tools; see `tool_use.tooled`).
    """

    @property
    def name(self) -> str:
        """The model spec, as recorded in the ledger."""
        ...

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        """Answer, or raise ModelFailure."""
        ...


def prompt_fit(model: CompletionModel, budget: int) -> tuple[bool, int]:
    """Whether `model` wants the compact system prompt, and the memory budget it has room for
    (the smaller of `budget` and its own). Hosted models declare neither and keep the full
    protocol and the budget asked for."""
    compact = bool(getattr(model, "compact_prompt", False))
    own = getattr(model, "memory_budget", None)
    return compact, min(budget, own) if isinstance(own, int) else budget


def sampled(model: CompletionModel, sampling: Sampling | None) -> CompletionModel:
    """`model` calling with `sampling` (the caller's settings); a model that cannot take them
    refuses them (InvalidInputError naming the first), never ignores them."""
    if not sampling:
        return model
    apply = getattr(model, "with_sampling", None)
    if apply is None:
        name = next(iter(sampling.chosen()))
        raise InvalidInputError(
            f"model {model.name} takes no sampling settings (`{name}`); leave them out",
            param=name,
        )
    result: CompletionModel = apply(sampling)
    return result
