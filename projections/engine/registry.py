"""Every projection handler by event topic, from the handler modules named here.

A handler module records its own handlers (`handlers.registrar`); this list is the only place
that says which modules the projector applies, so nothing depends on an import's side effect.
"""

from __future__ import annotations

from mindledger.projections.engine import (
    handlers,
    import_handlers,
    knowledge_handlers,
    thread_handlers,
)
from mindledger.projections.engine.handlers import Handler

MODULES = (handlers, thread_handlers, import_handlers, knowledge_handlers)


def collect() -> dict[str, Handler]:
    """The handlers of every module in `MODULES`; a topic handled twice is an error."""
    found: dict[str, Handler] = {}
    for module in MODULES:
        twice = set(found) & set(module.HANDLERS)
        if twice:
            raise ValueError(f"{module.__name__} handles {sorted(twice)} again")
        found.update(module.HANDLERS)
    return found


HANDLERS = collect()
