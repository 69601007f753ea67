"""What the read side needs from the ledger (the SQLite and PostgreSQL readers provide it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol


class LedgerRow(Protocol):
    """One recorded event in ledger order (read-only, so frozen rows satisfy it)."""

    @property
    def position(self) -> int: ...
    @property
    def hash(self) -> str: ...
    @property
    def topic(self) -> str | None: ...
    @property
    def originator_id(self) -> str | None: ...
    @property
    def version(self) -> int | None: ...
    @property
    def state(self) -> bytes | None: ...


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
