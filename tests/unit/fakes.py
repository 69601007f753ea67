"""Fakes of the turn's ports, so the turn protocol runs without a database: memory a test
sets, thread lookups over the in-memory ledger, a scripted model, a workspace of named files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from mindledger.domain.application import Mind
from mindledger.domain.context_port import (
    AssembledContext,
    AutonomyState,
    ContextItem,
    ContextRequest,
    ThreadMatch,
)
from mindledger.domain.errors import MindError, UnknownThreadError
from mindledger.domain.model_port import Completion, ModelFailure
from mindledger.domain.thread import short_id
from mindledger.domain.turns import TurnService


@dataclass
class FakePending:
    """A context that is ready at once."""

    context: AssembledContext
    cancelled: bool = False

    def result(self) -> AssembledContext:
        return self.context

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class FakeRetrieval:
    """Memory as the test sets it: `items`, read as of `head` (default: the ledger's last
    position when asked). Every request is kept, with the ledger's last position then."""

    mind: Mind
    items: list[ContextItem] = field(default_factory=list)
    head: int | None = None
    requests: list[tuple[ContextRequest, int]] = field(default_factory=list)
    closed: bool = False

    def context(self, request: ContextRequest) -> FakePending:
        position = self.mind.recorder.max_notification_id() or 0
        self.requests.append((request, position))
        rendered = "\n".join(f"[#{i.id}] {i.text}" for i in self.items)
        head = position if self.head is None else self.head
        return FakePending(
            AssembledContext(
                list(self.items), rendered, sum(i.tokens for i in self.items), head=head
            )
        )

    def close(self) -> None:
        self.closed = True


@dataclass
class FakeThreads:
    """Thread lookups over the threads a test registered (read from the ledger each time)."""

    mind: Mind
    known: list[UUID] = field(default_factory=list)
    state: AutonomyState = field(default_factory=lambda: AutonomyState(0.0, None, 0, None, 0))

    def add(self, thread_id: UUID) -> UUID:
        self.known.append(thread_id)
        return thread_id

    def find_threads(self, given: str) -> list[ThreadMatch]:
        found = []
        for stream in self.known:
            try:
                thread = self.mind.thread(stream)
            except UnknownThreadError:
                continue
            if short_id(stream).startswith(given.lower()) or thread.label.lower() == given.lower():
                found.append(ThreadMatch(stream.hex, short_id(stream), thread.label, thread.status))
        return found

    def autonomy_state(self, now: datetime) -> AutonomyState:
        return self.state


@dataclass
class FakeModel:
    """Replies with `reply`, or raises `failure`; keeps the messages it was sent."""

    reply: str = "ok"
    failure: ModelFailure | None = None
    name: str = "fake/model"
    sent: list[list[dict[str, Any]]] = field(default_factory=list)

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        self.sent.append(messages)
        if self.failure is not None:
            raise self.failure
        return Completion(self.reply, self.name, "fake")


@dataclass
class FakeWorkspace:
    """Files that exist, and those changed during the turn."""

    existing: set[str] = field(default_factory=set)
    changed: set[str] = field(default_factory=set)

    def changed_file(self, path: str, since: datetime) -> str:
        if path not in self.changed:
            raise MindError(f"{path!r} was not changed during this cycle")
        return path

    def existing_file(self, path: str) -> str:
        if path not in self.existing | self.changed:
            raise MindError(f"no file {path!r} in the workspace")
        return path


def memory_item(position: int, text: str, kind: str = "message", **extra: Any) -> ContextItem:
    """A context item for the ledger event at `position`."""
    return ContextItem(position, kind, "test", "set by the test", 1.0, 5, text, **extra)


def turn_service(
    mind: Mind,
    retrieval: FakeRetrieval | None = None,
    threads: FakeThreads | None = None,
    workspace: FakeWorkspace | None = None,
    dead: set[int] | None = None,
    pid: int = 100,
) -> TurnService:
    """The real TurnService over the fakes (pids in `dead` count as stopped processes)."""
    return TurnService(
        mind,
        retrieval or FakeRetrieval(mind),
        threads or FakeThreads(mind),
        pid,
        "test-host",
        lambda p, host: p in (dead or set()),
        workspace=(lambda config: workspace) if workspace is not None else None,
    )
