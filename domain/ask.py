"""Ask: one question asked, and the route its answer took (`Ask.Routed`); the use case that
routes it is `domain.knowledge_ask.Asker`. Kept apart from it so that every reader knows the
event (and its sealed fields) without importing the turn machinery."""

from __future__ import annotations

from typing import Any, Literal

from mindledger.domain.events import AggregateRoot, DomainEvent

Route = Literal["memory-exact", "memory-semantic", "model"]
Via = Literal["ask", "turn"]


class Ask(AggregateRoot):
    """One question asked, and the route its answer took."""

    class Routed(DomainEvent):
        TOPIC = "mind.ask.routed"
        SEALED = {"question": "own", "intent_hash": "own", "candidates": "own"}
        question: str
        intent_hash: str
        route: Route
        decision: str
        reasons: list[str]
        score: float | None = None
        item_id: str | None = None
        turn_id: str | None = None
        current: bool = False
        via: Via = "ask"
        semantic: str  # "on", or "off: <reason>"
        candidates: list[dict[str, Any]] = []

    def when_Routed(self, e: Routed) -> None:
        pass
