"""The floor (`mindledger.MindLedger`) for the command's home, opened once per command and
closed when the command ends; it notes what the command's writes returned, so that a stdout
that then fails can say what was recorded all the same (`recorded`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from mindledger.application import MindLedger
from mindledger.compose import Home, command_scope
from mindledger.read_model_repair import READS

# What the command's last write returned, as JSON data (None: it wrote nothing yet).
last_write: ContextVar[dict[str, Any] | None] = ContextVar("last_write", default=None)

# Public methods that are not use cases writing to the ledger.
NOT_WRITES = READS | {"close", "warm", "model_for", "current_identity", "project", "follow"}


def opened(home: Home) -> MindLedger:
    """The mind at the command's home, as the floor gives it; closed with the command."""
    mind = NotedMindLedger(home)
    scope = command_scope.get()
    if scope is not None:
        scope.callback(mind.close)
    return mind


def _noted(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        done = fn(*args, **kwargs)
        result = getattr(done, "result", done)  # a turn's TurnDone carries its result
        dump = getattr(result, "model_dump", None)
        if dump is not None:
            data = dump(mode="json")
            last_write.set(data if isinstance(data, dict) else None)
        return done

    return call


class NotedMindLedger(MindLedger):
    """The floor, each use case that writes noting its result in `last_write`."""


for _name, _member in inspect.getmembers(MindLedger, inspect.isfunction):
    if not _name.startswith("_") and _name not in NOT_WRITES:
        setattr(NotedMindLedger, _name, _noted(_member))
