"""Typed errors: every rejection a user can see is one of these.

Four kinds sit under `MindError`, and each front-end maps a kind to its output in one place
(an exit code and one line; an HTTP status; MCP `isError`): `InvalidInputError` (refused input:
fix what was given), `NotFoundError` (nothing has that name), `ConflictError` (the mind's state
forbids it now) and `UnavailableError` (a part the use case needs is missing or busy)."""

from __future__ import annotations


class MindError(Exception):
    """Raised when a command cannot be carried out; the message says what to do.

    `param`: the argument at fault, by the floor method's parameter name, when one is (HTTP
    answers it as OpenAI's error `param`). A message names arguments as request words in
    backticks (`` `before` ``), which the command line shows as its flags (`--before`)."""

    param: str | None = None

    def __init__(self, *args: object, param: str | None = None) -> None:
        super().__init__(*args)
        if param is not None:
            self.param = param


class InvalidInputError(MindError):
    """Raised when a text, token or option is empty, too long or malformed."""


class UnsupportedParameterError(InvalidInputError):
    """Raised when a model cannot take a parameter a caller gave (tools, a response format)."""


class NotFoundError(MindError):
    """Raised when an id, name or home names nothing there is."""


class ConflictError(MindError):
    """Raised when the mind's current state forbids the change (already done, held, closed)."""


class UnavailableError(MindError):
    """Raised when a part the use case needs is missing or busy (an optional model, a lock)."""


class NotInitialisedError(NotFoundError):
    """Raised when a command needs a mind and `mind init` has not been run."""


class AlreadyInitialisedError(ConflictError):
    """Raised when `mind init` runs on a home that already holds a mind."""


class UnknownCommitmentError(NotFoundError):
    """Raised when a CID names no commitment."""


class CommitmentAlreadyClosedError(ConflictError):
    """Raised when closing a commitment whose latest episode is already closed."""


class UnknownTurnError(NotFoundError):
    """Raised when a turn number, id or prefix names no turn (or names several)."""


class UnknownConceptError(NotFoundError):
    """Raised when a concept token has never been defined."""


class UnknownThreadError(NotFoundError):
    """Raised when a thread id names no thread (or names several)."""


class ThreadResolvedError(ConflictError):
    """Raised when a command touches a thread that is resolved and tombstoned."""


class ResolutionError(MindError):
    """Raised when a thread resolution lacks what its verdict requires."""


class IdentityError(MindError):
    """Raised when a name proposal, ratification or adoption breaks the rules."""


class LedgerBusyError(UnavailableError):
    """Raised when another process holds the ledger's write lock for too long."""


class LedgerReadOnlyError(ConflictError):
    """Raised when the ledger cannot be written by this process (a read-only home)."""


class LedgerCorruptError(MindError):
    """Raised when the ledger file cannot be read as a ledger at all."""


class LedgerUnverifiedError(MindError):
    """Raised when a command that would replace evidence runs on a ledger that fails verify."""


class ReadModelCorruptError(MindError):
    """Raised when a read-model file is not a DuckDB database (damaged or overwritten)."""


# What a warning quotes of a cause: a dependency's text may be pages long or hold a whole
# traceback, and a warning is one line; enough to name what failed (the home's errors log
# keeps the rest, where there is one).
CAUSE_CHARS = 160


def cause_line(e: BaseException, *, named: bool = True) -> str:
    """What a warning quotes of `e`: the first line of its text that says something, cut to
    CAUSE_CHARS (marked with "..."), after its class name (`named`: "OSError: no such file");
    the class name alone when its text says nothing."""
    said = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
    if len(said) > CAUSE_CHARS:
        said = said[:CAUSE_CHARS].rstrip() + "..."
    if not said:
        return type(e).__name__
    return f"{type(e).__name__}: {said}" if named else said
