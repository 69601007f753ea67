"""What the read side needs from the ledger (the SQLite and PostgreSQL readers provide it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol


class LedgerRow(Protocol):
    """One recorded event in ledger order."""

    position: int
    hash: str
    topic: str | None
    originator_id: str | None
    version: int | None
    state: bytes | None


class LedgerReader(Protocol):
    """Reads recorded events in position order."""

    def head(self) -> tuple[int, str | None]:
        """(last position, its hash)."""
        ...

    def rows(
        self, after: int = 0, batch: int = 5000, stop: int | None = None
    ) -> Iterator[LedgerRow]:
        """Rows after a position, in order."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...
