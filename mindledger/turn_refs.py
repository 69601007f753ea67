"""The one rule that turns a reference into a turn id, for every front-end and use case
(`mind log --turn REF`, `mind approve|discard TURN`, the HTTP routes that take a turn).

A reference is, in this order:
- `last`: the turn started latest;
- `#12`: turn number 12;
- all digits (`12`): a turn number first; when no turn has that number and there are at least
  4 digits, an id prefix (so `12345678`, the first 8 digits of an id, still names that turn);
- 32 hex digits (dashes optional): a full id, looked up in the ledger itself, so an id a write
  has just returned resolves without waiting for any read model;
- at least 4 hex digits (dashes ignored): the one turn whose id starts with them.

None found is `UnknownTurnError`, several is `AmbiguousTurnError` listing them, anything else
`InvalidInputError`; each one line, and nothing is changed. Numbers, prefixes and `last` are
read from a read model that includes every event written before the call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from uuid import UUID

from mindledger.compose import Home, open_mind, read_model
from mindledger.domain.errors import ConflictError, InvalidInputError, UnknownTurnError

MIN_PREFIX = 4
SHOWN = 10  # candidates listed in an ambiguity error
MAX_NUMBER = 10**18  # turn numbers are BIGINT; a longer run of digits is no number
HOW = "give 'last', a turn number (12 or #12), a turn id or at least 4 hex digits of one"
TURN_REF = (
    "A turn: `last`, its number (`12` or `#12`; all digits is a number first, then an id "
    "prefix), its id, or at least 4 hex digits of its id."
)
_HEX = re.compile(r"[0-9a-f]+")


class AmbiguousTurnError(ConflictError):
    """Raised when a turn reference names more than one turn (nothing is changed)."""

    def __init__(self, message: str, candidates: Sequence[str]) -> None:
        super().__init__(message)
        self.candidates = list(candidates)


def resolve_turn(home: Home, ref: str) -> UUID:
    """The id of the one turn `ref` names (`last`, `12`, `#12`, a full id or a unique prefix
    of at least 4 hex digits; all digits is a number first, then a prefix)."""
    given = ref.strip().lower()
    if given == "last":
        return _latest(home)
    if given.startswith("#") and given[1:].isascii() and given[1:].isdigit():
        if int(given[1:]) >= MAX_NUMBER:
            raise InvalidInputError(f"{ref.strip()[:40]!r} is not a turn number; {HOW}")
        return _numbered(home, ref, int(given[1:]), None)
    digits = given.replace("-", "")
    if not _HEX.fullmatch(digits) or not MIN_PREFIX <= len(digits) <= 32:
        if given.isascii() and given.isdigit() and len(given) < MIN_PREFIX:  # a number only
            return _numbered(home, ref, int(given), None)
        raise InvalidInputError(f"{ref.strip()[:40]!r} is not a turn reference; {HOW}")
    if given.isdigit() and int(given) < MAX_NUMBER:
        return _numbered(home, ref, int(given), digits)
    if len(digits) == 32:
        return _in_ledger(home, UUID(hex=digits))
    return _by_prefix(home, ref, digits)


def _latest(home: Home) -> UUID:
    from mindledger.projections.queries.turn_queries import latest_turn

    with read_model(home) as con:
        found = latest_turn(con)
    if found is None:
        raise UnknownTurnError("this mind has had no turn yet, so 'last' names none")
    return UUID(found)


def _numbered(home: Home, ref: str, number: int, prefix: str | None) -> UUID:
    """Turn `number`; failing that, the turn whose id starts with `prefix` (when given)."""
    from mindledger.projections.queries.turn_queries import numbered_turns, turns_with_prefix

    with read_model(home) as con:
        found = numbered_turns(con, number)
        if not found and prefix is not None:
            return _one(ref, prefix, turns_with_prefix(con, prefix, SHOWN + 1), number)
    return _one(ref, None, found, number)


def _by_prefix(home: Home, ref: str, prefix: str) -> UUID:
    from mindledger.projections.queries.turn_queries import turns_with_prefix

    with read_model(home) as con:
        return _one(ref, prefix, turns_with_prefix(con, prefix, SHOWN + 1), None)


def _one(ref: str, prefix: str | None, found: list[tuple[str, int]], number: int | None) -> UUID:
    """The single match, else the error that says why there is none."""
    if len(found) == 1:
        return UUID(found[0][0])
    if not found:
        if prefix is None:
            raise UnknownTurnError(f"no turn is number {number}")
        also = f"no turn is number {number} and " if number is not None else ""
        raise UnknownTurnError(f"{also}no turn has an id starting with {prefix}")
    listed = ", ".join(f"#{n} {UUID(s).hex[:12]}" for s, n in found[:SHOWN])
    more = " and more" if len(found) > SHOWN else ""
    raise AmbiguousTurnError(
        f"{ref.strip()!r} names several turns: {listed}{more}; nothing changed, give the "
        "turn's number or more of its id",
        [UUID(s).hex for s, _ in found[:SHOWN]],
    )


def _in_ledger(home: Home, turn_id: UUID) -> UUID:
    """A full id, when the ledger holds a turn with it (read from the ledger, not a read model,
    so it holds as soon as the write that made the turn has returned)."""
    from mindledger.domain.turn import Turn

    mind = open_mind(home)
    try:
        first = list(mind.events.get(turn_id, limit=1))
    finally:
        mind.close()
    if not first or not isinstance(first[0], Turn.Started):
        raise UnknownTurnError(f"there is no turn {turn_id.hex}")
    return turn_id
