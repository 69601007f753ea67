"""The model boundary as the domain sees it: a port that completes a conversation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


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
    "truncated",
    "not_installed",
    "bad_request",
)


class CompletionModel(Protocol):
    """Anything that can answer a list of chat messages."""

    @property
    def name(self) -> str:
        """The model spec, as recorded in the ledger."""
        ...

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        """Answer, or raise ModelFailure."""
        ...
