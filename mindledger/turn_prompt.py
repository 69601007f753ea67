"""What the model was sent in a turn (`mind log --turn REF`), the turn named by id, prefix or
`last`."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from mindledger.compose import Home, open_mind, read_model
from mindledger.domain.errors import InvalidInputError, UnknownTurnError
from mindledger.domain.turn import Turn
from mindledger.projections.queries.turn_queries import latest_turn, turns_with_prefix


def resolve_turn(home: Home, ref: str) -> UUID:
    """A turn id from `last` (the latest turn), its full id or a unique prefix of at least 4
    hex digits."""
    text = ref.strip().lower().replace("-", "")
    if text == "last":
        return _latest(home)
    try:
        return UUID(text) if len(text) == 32 else _by_prefix(home, text)
    except ValueError:
        raise InvalidInputError(f"{ref!r} is not a turn id") from None


def _latest(home: Home) -> UUID:
    with read_model(home) as con:
        found = latest_turn(con)
    if found is None:
        raise InvalidInputError("this mind has had no turn yet; `mind turn TEXT` has one")
    return UUID(found)


def _by_prefix(home: Home, prefix: str) -> UUID:
    if len(prefix) < 4 or any(c not in "0123456789abcdef" for c in prefix):
        raise InvalidInputError(f"{prefix!r} is not a turn id (give at least 4 hex digits)")
    with read_model(home) as con:
        found = turns_with_prefix(con, prefix)
    if len(found) != 1:
        what = "no turn" if not found else "more than one turn"
        raise UnknownTurnError(f"{what} has an id starting with {prefix}")
    return UUID(found[0])


def turn_prompt(home: Home, turn_id: UUID) -> dict[str, Any]:
    """The turn's id, status, model and the messages its model was sent."""
    mind = open_mind(home)
    try:
        events = list(mind.events.get(turn_id))
    finally:
        mind.close()
    if not events or not isinstance(events[0], Turn.Started):
        raise UnknownTurnError(f"there is no turn {turn_id.hex}")
    data: dict[str, Any] = {"turn": turn_id.hex, "status": "started", "model": events[0].model}
    data["messages"] = None
    for e in events:
        if isinstance(e, Turn.Replied | Turn.GenerationFailed):
            data["messages"] = list(e.prompt) or None
            data["status"] = "failed" if isinstance(e, Turn.GenerationFailed) else "replied"
        elif isinstance(e, Turn.Completed | Turn.Interrupted):
            data["status"] = "complete" if isinstance(e, Turn.Completed) else "interrupted"
    return data
