"""How to call one model (`ModelSettings`): here apart from the LiteLLM adapter so that a turn
on another kind of model (the scripted `mock`, the embedded one) builds its settings without
importing that adapter (`mindledger/models.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    # A caller's settings for one reply (domain/sampling.py); None: the provider's default.
    top_p: float | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    user: str | None = None
    # A caller's tools and response format (domain/tool_use.py), passed as they are.
    tooling: dict[str, Any] = field(default_factory=dict)
