"""The floor (`mindledger.MindLedger`) for the command's home, opened once per command and
closed when the command ends; it notes what the command's writes returned, so that a stdout
that then fails can say what was recorded all the same (`recorded`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from mindledger.compose import Home, command_scope

if TYPE_CHECKING:
    from mindledger.application import MindLedger

# What the command's last write returned, as JSON data (None: it wrote nothing yet).
last_write: ContextVar[dict[str, Any] | None] = ContextVar("last_write", default=None)

# Methods that are not use cases writing to the ledger, besides the reads (`READS`).
NOT_WRITES = {"close", "warm", "model_for", "current_identity", "project", "follow"}


def opened(home: Home) -> MindLedger:
    """The mind at the command's home, as the floor gives it; closed with the command."""
    mind = noted_floor()(home)
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


@functools.cache
def noted_floor() -> type[MindLedger]:
    """The floor, each use case that writes noting its result in `last_write`; built on first
    use, so that the command tree loads without the floor (`mind --help` imports none of it)."""
    from mindledger.application import MindLedger
    from mindledger.read_model_repair import READS

    noted = type("NotedMindLedger", (MindLedger,), {"__doc__": noted_floor.__doc__})
    for name, member in inspect.getmembers(MindLedger, inspect.isfunction):
        if not name.startswith("_") and name not in READS | NOT_WRITES:
            setattr(noted, name, _noted(member))
    return noted
