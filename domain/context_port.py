"""What a turn needs from the read side: a bounded, recorded context (and, for its thread lines
and the autonomy gate, a few thread facts). Write-side facts (turn numbers, unfinished turns)
come from the ledger: domain/turn_numbers.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, Protocol

# Texts to vectors, one per text: the embedding boundary as retrieval sees it.
Embed = Callable[[list[str]], list[list[float]]]


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
    day: str | None = None  # the day a message was said (YYYY-MM-DD): heads its group
    # A long message's passage: (start, end, whole length) in characters of its stored text.
    excerpt: tuple[int, int, int] | None = None

    def record(self) -> dict[str, Any]:
        """The item as recorded in the turn (the text itself stays in the ledger; an excerpt's
        span only when it is one, so earlier turns' records read the same). Built by hand:
        `asdict` (a deep copy) cost 8 ms per turn over a context's ~100 items."""
        data = dict(vars(self))
        del data["text"]
        if data["excerpt"] is None:
            del data["excerpt"]
        else:
            data["excerpt"] = list(data["excerpt"])
        return data


@dataclass(frozen=True)
class AssembledContext:
    """The selected items, the rendered memory block and its size in tokens."""

    items: list[ContextItem]
    rendered: str
    tokens: int
    dropped: list[dict[str, Any]] = field(default_factory=list)  # the nearest misses
    dropped_total: int = 0  # every item over the budget
    head: int = 0  # the last ledger position the context was read from

    def evidence_ids(self) -> set[int]:
        """Ledger positions a claim may cite."""
        return {item.id for item in self.items}


class ThreadMatch(NamedTuple):
    """A thread found by id prefix or label."""

    stream_id: str
    id: str
    label: str
    status: str


class AutonomyState(NamedTuple):
    """What the salience gate looks at, as of a time."""

    max_tension: float
    top_thread: str | None  # stream id of the thread with the highest tension
    live_threads: int
    last_cycle_at: datetime | None
    cycles: int


class ToolRun(NamedTuple):
    """A tool the runtime ran during a turn (recorded by the runtime, never claimed by text)."""

    name: str
    detail: str = ""


class Workspace(Protocol):
    """The folder whose files count as artifacts of work."""

    def changed_file(self, path: str, since: datetime) -> str:
        """The file's workspace-relative path if it is a workspace file (not a ledger or journal
        file, no escape) changed after `since`; otherwise MindError saying why."""
        ...

    def existing_file(self, path: str) -> str:
        """The workspace-relative path of an existing workspace file, or MindError."""
        ...


class ContextRequest(NamedTuple):
    """What a turn asks memory for: `query` within `budget` tokens as of `now`, leaving out the
    turn's own message; `embed` turns on the vector channel, `spans` the spans channel."""

    query: str
    budget: int
    exclude_turn: str | None
    now: datetime
    lead_with_threads: bool = False
    embed: Embed | None = None
    spans: bool = False


class PendingContext(Protocol):
    """A context being read: `result()` gives it, `cancel()` gives it up."""

    def result(self) -> AssembledContext:
        """The context (waits for the read to finish; releases the read side)."""
        ...

    def cancel(self) -> None:
        """Release the read side without a context."""
        ...


class Retrieval(Protocol):
    """The read side as a turn sees it: memory for a message, and nothing else."""

    def context(self, request: ContextRequest) -> PendingContext:
        """Start reading memory as of now: it includes every event written before this call and
        nothing after it. A turn asks before it saves its message, so the message is never its
        own memory, and a read side that cannot take the events so far refuses the turn before
        anything is written. Deterministic for the same events."""
        ...

    def close(self) -> None:
        """Release what the read side holds between turns (its ledger connection)."""
        ...


class ThreadReads(Protocol):
    """Thread facts from the read side: lookups for thread lines, tension for the gate."""

    def find_threads(self, given: str) -> list[ThreadMatch]:
        """Threads whose short id starts with `given`, or whose label is `given` (any case)."""
        ...

    def autonomy_state(self, now: datetime) -> AutonomyState:
        """Tension and cycle facts for the salience gate."""
        ...
