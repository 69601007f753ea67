"""A list-shaped result (`mindledger.results` names it too): its dump is a JSON list."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from pydantic import ConfigDict, RootModel

Row = TypeVar("Row")


class Rows(RootModel[list[Row]], Generic[Row]):
    """A list-shaped result: its dump is a JSON list; it indexes, iterates and counts."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    def __getitem__(self, index: int) -> Row:
        """The row at `index`."""
        return self.root[index]

    def __iter__(self) -> Iterator[Row]:  # type: ignore[override]
        """The rows (not pydantic's (name, value) pairs: a list result iterates as a list)."""
        return iter(self.root)

    def __len__(self) -> int:
        """How many rows."""
        return len(self.root)

    def __bool__(self) -> bool:
        """Whether there are rows."""
        return bool(self.root)
