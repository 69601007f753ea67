"""What asking needs from the read side (the questions of live items), and the similarity it
measures them by."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class KnownQuestion:
    """A live item's question, as the read side lists them for semantic matching."""

    item_id: str
    intent_hash: str
    question: str


class KnowledgeReads(Protocol):
    """The read side as asking sees it."""

    def questions(self) -> list[KnownQuestion]:
        """The question of every item that is not deleted."""
        ...


def cosine(a: list[float], b: list[float]) -> float:
    """The cosine of two vectors (0 for a zero vector)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
