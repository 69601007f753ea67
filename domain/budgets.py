"""How much memory goes in front of the model: the one place the budget's default and floors
are written. Every front-end reads them from here (the command line's options and fast path,
the HTTP API's schema, MCP's tools, the web page through the server) and the floor enforces
them, so no front-end can drift."""

from __future__ import annotations

from mindledger.domain.errors import InvalidInputError

DEFAULT_BUDGET = 2000  # tokens of memory in front of the model (turn, ask) or recalled
TURN_BUDGET_FLOOR = 200  # below this a turn's prompt has no room for its own protocol
RECALL_BUDGET_FLOOR = 50  # recall alone: room for one short item


def check_budget(budget: int, floor: int, name: str = "budget") -> None:
    """Raise InvalidInputError when `budget` is not a whole number of at least `floor`."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < floor:
        raise InvalidInputError(
            f"{name} {budget!r} is too small; give at least {floor} tokens"
            if isinstance(budget, int) and not isinstance(budget, bool)
            else f"{name} must be a whole number of tokens (at least {floor})",
            param=name,
        )
