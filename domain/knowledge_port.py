"""What asking needs from the read side: the items whose questions are nearest a question
(semantic matching, through whatever embedding model is configured)."""

from __future__ import annotations

import math
from typing import NamedTuple, Protocol


class KnownQuestion(NamedTuple):
    """An item's question, as the read side lists them for semantic matching."""

    item_id: str
    intent_hash: str
    question: str


class Similar(NamedTuple):
    """An item's question and its cosine similarity to the question asked."""

    known: KnownQuestion
    score: float


class KnowledgeReads(Protocol):
    """The read side as asking sees it: semantic matching over item questions."""

    def similar(self, question: str, k: int) -> list[Similar]:
        """The `k` items not deleted whose questions are nearest `question`, best first."""
        ...


def cosine(a: list[float], b: list[float]) -> float:
    """The cosine of two vectors (0 for a zero vector)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
