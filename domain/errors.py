"""Typed errors: every rejection a user can see is one of these."""

from __future__ import annotations


class MindError(Exception):
    """Raised when a command cannot be carried out; the message says what to do."""


class InvalidInputError(MindError):
    """Raised when a text, token or option is empty, too long or malformed."""


class NotInitialisedError(MindError):
    """Raised when a command needs a mind and `mind init` has not been run."""


class AlreadyInitialisedError(MindError):
    """Raised when `mind init` runs on a home that already holds a mind."""


class UnknownCommitmentError(MindError):
    """Raised when a CID names no commitment."""


class CommitmentAlreadyClosedError(MindError):
    """Raised when closing a commitment whose latest episode is already closed."""


class UnknownConceptError(MindError):
    """Raised when a concept token has never been defined."""


class UnknownThreadError(MindError):
    """Raised when a thread id names no thread (or names several)."""


class ThreadResolvedError(MindError):
    """Raised when a command touches a thread that is resolved and tombstoned."""


class ResolutionError(MindError):
    """Raised when a thread resolution lacks what its verdict requires."""


class IdentityError(MindError):
    """Raised when a name proposal, ratification or adoption breaks the rules."""


class LedgerBusyError(MindError):
    """Raised when another process holds the ledger's write lock for too long."""


class LedgerReadOnlyError(MindError):
    """Raised when the ledger cannot be written by this process (a read-only home)."""


class LedgerCorruptError(MindError):
    """Raised when the ledger file cannot be read as a ledger at all."""


class LedgerUnverifiedError(MindError):
    """Raised when a command that would replace evidence runs on a ledger that fails verify."""


class ReadModelCorruptError(MindError):
    """Raised when a read-model file is not a DuckDB database (damaged or overwritten)."""
