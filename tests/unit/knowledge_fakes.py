"""Fakes for knowledge: a deterministic embedder (tests only) and semantic matching over the
ledger."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from mindledger.domain.application import Mind
from mindledger.domain.changes import Changes
from mindledger.domain.knowledge import normalise_intent
from mindledger.domain.knowledge_port import KnownQuestion, Similar, cosine

DIMENSIONS = 64


@dataclass
class FakeEmbedder:
    """Vectors a test sets by text (normalised as intents); any other text gets a one-hot vector
    of its own (from its hash), far from every set one. Keeps every batch it was asked."""

    vectors: dict[str, list[float]] = field(default_factory=dict)
    asked: list[list[str]] = field(default_factory=list)

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.asked.append(list(texts))
        return [self.vector(t) for t in texts]

    def vector(self, text: str) -> list[float]:
        key = normalise_intent(text)
        if key in self.vectors:
            return self.vectors[key] + [0.0] * (DIMENSIONS - len(self.vectors[key]))
        slot = 3 + int(hashlib.sha256(key.encode()).hexdigest(), 16) % (DIMENSIONS - 3)
        return [1.0 if i == slot else 0.0 for i in range(DIMENSIONS)]


@dataclass
class LedgerKnowledgeReads:
    """Semantic matching over the questions of the items captured in the ledger (the read
    side's answer, without it), through `embed`."""

    mind: Mind
    embed: FakeEmbedder

    def similar(self, question: str, k: int) -> list[Similar]:
        seen: dict[str, KnownQuestion] = {}
        for e in Changes(self.mind).scan(["mind.knowledge.captured"]):
            state = e.model_dump()
            seen[state["intent_hash"]] = KnownQuestion(
                state["item_id"], state["intent_hash"], state["question"]
            )
        live = [q for h, q in seen.items() if not self.mind.knowledge_item(h).deleted]  # type: ignore[union-attr]
        vectors = self.embed([question] + [q.question for q in live])
        scored = [Similar(q, cosine(vectors[0], v)) for q, v in zip(live, vectors[1:], strict=True)]
        return sorted(scored, key=lambda s: (-s.score, s.known.item_id))[:k]
