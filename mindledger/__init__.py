"""mindledger: a persistent, inspectable mind for language-model agents.

    import mindledger

    with mindledger.open("~/minds/echo") as mind:   # a home made by `mind init`
        mind.turn("Remind me to send the report", model="mock", mock_reply="Noted.")
        mind.recall("report")

`open` gives one mind's use cases (`MindLedger`), each returning what `mind ... --json` prints.
Errors are `MindError` and its kinds. Nothing heavy loads until a use case needs it.

The installed distribution adds this one name; the repository's top-level folders (`domain/`,
`projections/`, `adapters/`, `cli/`, `service/`) are its subpackages (symlinked here, see
docs/decisions/0100-one-name-in-site-packages.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mindledger.application import MindLedger, TurnDone, import_ledger, init, open
    from mindledger.domain.budgets import DEFAULT_BUDGET, RECALL_BUDGET_FLOOR, TURN_BUDGET_FLOOR
    from mindledger.domain.errors import (
        ConflictError,
        InvalidInputError,
        MindError,
        NotFoundError,
        NotInitialisedError,
        UnavailableError,
    )
    from mindledger.rules import AsOf, parse_as_of

__all__ = [
    "DEFAULT_BUDGET",
    "RECALL_BUDGET_FLOOR",
    "TURN_BUDGET_FLOOR",
    "AsOf",
    "ConflictError",
    "InvalidInputError",
    "MindError",
    "MindLedger",
    "NotFoundError",
    "NotInitialisedError",
    "TurnDone",
    "UnavailableError",
    "import_ledger",
    "init",
    "open",
    "parse_as_of",
]

_WHERE = {
    "open": "mindledger.application",
    "init": "mindledger.application",
    "import_ledger": "mindledger.application",
    "MindLedger": "mindledger.application",
    "TurnDone": "mindledger.application",
    "DEFAULT_BUDGET": "mindledger.domain.budgets",
    "RECALL_BUDGET_FLOOR": "mindledger.domain.budgets",
    "TURN_BUDGET_FLOOR": "mindledger.domain.budgets",
    "MindError": "mindledger.domain.errors",
    "InvalidInputError": "mindledger.domain.errors",
    "NotInitialisedError": "mindledger.domain.errors",
    "NotFoundError": "mindledger.domain.errors",
    "ConflictError": "mindledger.domain.errors",
    "UnavailableError": "mindledger.domain.errors",
    "AsOf": "mindledger.rules",
    "parse_as_of": "mindledger.rules",
}


def __getattr__(name: str) -> Any:
    """The public names, each imported on first use (`import mindledger` stays cheap)."""
    if name in _WHERE:
        from importlib import import_module

        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'mindledger' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names too (they load on first use), so `dir()` and `help()` show them."""
    return sorted({*globals(), *__all__})
