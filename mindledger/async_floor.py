"""The floor for async programs (the server): `AsyncMindLedger` has one coroutine per public
`MindLedger` method, each running the blocking method in a worker thread (anyio's, so reads run
concurrently and the event loop never blocks). The coroutines are made from the one list of
methods (`public_methods`), so the two surfaces cannot drift."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mindledger.application import MindLedger

# Public methods that are plumbing, not use cases (`run_turn` is `turn` with its domain
# outcome beside the result, for front-ends that render more than the JSON; `run_tick` and
# `chat_turn` too; `current_identity` is the ledger's name and model for a chat's greeting;
# `interrupt_own_turns` is a stopping server's last write; `attempt_turn` is `run_turn` for a
# client's request that may be a retry).
PLUMBING = frozenset(
    {
        "model_for",
        "owner_write",
        "warm",
        "close",
        "run_turn",
        "attempt_turn",
        "run_tick",
        "chat_turn",
        "current_identity",
        "interrupt_own_turns",
        "follow_vectors",
    }
)


def public_methods(cls: type = MindLedger) -> list[str]:
    """The names of `cls`'s public methods (its own and inherited), properties left out."""
    return sorted(
        name
        for name in dir(cls)
        if not name.startswith("_") and inspect.isfunction(inspect.getattr_static(cls, name))
    )


def use_cases(cls: type = MindLedger) -> list[str]:
    """The public methods that are use cases: each returns a typed result."""
    return [name for name in public_methods(cls) if name not in PLUMBING]


class AsyncMindLedger:
    """A `MindLedger`'s methods as coroutines (`mind.aio`): `await mind.aio.recall("boiler")`
    runs `mind.recall("boiler")` in a worker thread and returns its result."""

    def __init__(self, mind: MindLedger) -> None:
        self.mind = mind

    if TYPE_CHECKING:  # the coroutines are made below, one per public method

        def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]: ...


def _twin(name: str) -> Callable[..., Awaitable[Any]]:
    """The coroutine that runs `MindLedger.<name>` in a worker thread."""
    sync = getattr(MindLedger, name)

    async def call(self: AsyncMindLedger, *args: Any, **kwargs: Any) -> Any:
        import anyio.to_thread

        method = getattr(self.mind, name)
        return await anyio.to_thread.run_sync(functools.partial(method, *args, **kwargs))

    call.__name__ = name
    call.__qualname__ = f"AsyncMindLedger.{name}"
    call.__doc__ = f"`MindLedger.{name}` in a worker thread. {inspect.getdoc(sync) or ''}"
    call.__signature__ = inspect.signature(sync)  # type: ignore[attr-defined]
    return call


for _name in public_methods():
    setattr(AsyncMindLedger, _name, _twin(_name))
