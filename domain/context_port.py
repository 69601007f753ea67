"""What a turn needs from the read side: a bounded, recorded context, and a few facts."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class ContextItem:
    """One piece of memory put in front of the model, and why."""

    id: int  # the ledger position of the event it comes from
    kind: str
    channel: str
    reason: str
    score: float
    tokens: int
    text: str
    source_id: str | None = None
    clipped: bool = False
    stream: str | None = None  # the aggregate it belongs to, for commitments and threads

    def record(self) -> dict[str, Any]:
        """The item as recorded in the turn (the text itself stays in the ledger)."""
        data = asdict(self)
        data.pop("text")
        return data


@dataclass(frozen=True)
class AssembledContext:
    """The selected items, the rendered memory block and its size in tokens."""

    items: list[ContextItem]
    rendered: str
    tokens: int
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def evidence_ids(self) -> set[int]:
        """Ledger positions a claim may cite."""
        return {item.id for item in self.items}


@dataclass(frozen=True)
class UnfinishedTurn:
    """A turn with a message and no outcome."""

    stream_id: str
    pid: int
    host: str


class ContextSource(Protocol):
    """The read side, as turns use it. Use it as a context manager around one turn's reads:
    each read includes every event written before it; the model is called after it closes."""

    def __enter__(self) -> ContextSource:
        """Start reading."""
        ...

    def __exit__(self, *exc: object) -> None:
        """Release the read model (before the model call, so others can project)."""
        ...

    def next_seq(self) -> int:
        """The sequence number of the next turn."""
        ...

    def unfinished_turns(self) -> list[UnfinishedTurn]:
        """Turns that have a message but no outcome."""
        ...

    def assemble(
        self, query: str, budget: int, exclude_turn: str | None, now: datetime
    ) -> AssembledContext:
        """Select and render memory for `query` within `budget` tokens (deterministic)."""
        ...

    def ledger_head(self) -> int:
        """The last position in the ledger."""
        ...
