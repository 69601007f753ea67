"""What the model was sent in a turn (`mind log --turn REF`; mindledger/turn_refs.py resolves
REF)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from mindledger.compose import Home, open_mind
from mindledger.domain.errors import UnknownTurnError
from mindledger.domain.turn import Turn


def turn_prompt(home: Home, turn_id: UUID) -> dict[str, Any]:
    """The turn's id, status, model and the messages its model was sent (and, with tools,
    the calls its reply made, the results that were its message, the turn they answer)."""
    mind = open_mind(home)
    try:
        events = list(mind.events.get(turn_id))
    finally:
        mind.close()
    if not events or not isinstance(events[0], Turn.Started):
        raise UnknownTurnError(f"there is no turn {turn_id.hex}")
    data: dict[str, Any] = {"turn": turn_id.hex, "status": "started", "model": events[0].model}
    data["messages"] = None
    started = events[0]
    data["tool_results"] = started.tool_results or None
    data["follows"] = started.follows
    for e in events:
        if isinstance(e, Turn.Replied | Turn.GenerationFailed):
            data["messages"] = list(e.prompt) or None
            data["tool_calls"] = getattr(e, "tool_calls", None) or None
            data["status"] = "failed" if isinstance(e, Turn.GenerationFailed) else "replied"
        elif isinstance(e, Turn.Completed | Turn.Interrupted):
            data["status"] = "complete" if isinstance(e, Turn.Completed) else "interrupted"
    return data
