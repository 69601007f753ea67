"""The embedded model as a CompletionModel: the loopback llama.cpp server, reached through the
same LiteLLM adapter as any other model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from domain.model_port import Completion

if TYPE_CHECKING:  # the adapter module is imported only when a call is made
    from adapters.litellm_model import ModelSettings


class LocalModel:
    """Starts (or reuses) the home's local model server on each call; `run_dir` holds its state."""

    def __init__(self, run_dir: Path, settings: ModelSettings) -> None:
        self.run_dir, self.settings = run_dir, settings

    @property
    def name(self) -> str:
        """The spec recorded in the ledger (local/...)."""
        return self.settings.spec

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        """Answer through the local server, or raise ModelFailure."""
        from adapters.litellm_model import LiteLLMModel
        from adapters.local_model import LocalModelServer

        base = LocalModelServer(self.run_dir).api_base()
        # A 135M model at temperature 0 easily loops until the token limit; llama.cpp's repeat
        # penalty keeps its answers short enough to finish.
        inner = LiteLLMModel(
            replace(
                self.settings,
                spec="openai/smollm2",
                api_base=base,
                extra_body={"repeat_penalty": 1.15},
            )
        )
        completion = inner.complete(messages, on_token)
        return replace(completion, model=self.name, provider="local")
