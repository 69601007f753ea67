"""How much memory goes in front of the model: the one place the budget's default and floors
are written. Every front-end reads them from here (the command line's options and fast path,
the HTTP API's schema, MCP's tools, the web page through the server) and the floor enforces
them, so no front-end can drift."""

from __future__ import annotations

from mindledger.domain.errors import InvalidInputError

DEFAULT_BUDGET = 2000  # tokens of memory in front of the model (turn, ask) or recalled
TURN_BUDGET_FLOOR = 200  # below this a turn's prompt has no room for its own protocol
RECALL_BUDGET_FLOOR = 50  # recall alone: room for one short item


# The most a budget may be: more than any model's context, and a bound, so a typo such as
# 10**12 (or a number of thousands of digits sent to the server) is refused here.
MAX_BUDGET = 100_000_000


def check_budget(budget: int, floor: int, name: str = "budget") -> None:
    """Raise InvalidInputError when `budget` is not a whole number from `floor` to
    MAX_BUDGET."""
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise InvalidInputError(
            f"{name} must be a whole number of tokens (at least {floor})", param=name
        )
    if budget < floor:
        raise InvalidInputError(
            f"{name} {shown_number(budget)} is too small; give at least {floor} tokens",
            param=name,
        )
    if budget > MAX_BUDGET:
        raise InvalidInputError(
            f"{name} is {shown_number(budget)}, too large; give at most {MAX_BUDGET:,} tokens",
            param=name,
        )


def shown_number(value: int | float) -> str:
    """A number as a message shows it, or its size when it is too long to print (an integer of
    thousands of digits cannot even be turned into text past Python's limit)."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"
    return f"{value:g}" if isinstance(value, float) else repr(value)
