"""The conversation's other results: knowledge items and their changes, `ask`, `recall` and
`embed` (`mindledger.results` names them too, loading this module on first use: a turn
returns a `TurnResult` and builds none of these)."""

from __future__ import annotations

from typing import Literal

from pydantic import JsonValue

from mindledger.domain.ask import Route
from mindledger.domain.knowledge import Freshness, ReusePolicy, Role, ValidationState
from mindledger.domain.knowledge_assessment import Decision
from mindledger.results import Failure, Number, Omitted, Result
from mindledger.results_rows import Rows

# -- knowledge -------------------------------------------------------------------------------


class KnowledgeItem(Result):
    """One knowledge item as it stands (question and answer null once deleted)."""

    id: str
    question: str | None
    answer: str | None
    state: ValidationState
    confidence: Number
    confidence_ppm: int
    freshness: Freshness
    max_age_days: int | None
    reuse: ReusePolicy
    revision: int
    content_hash: str
    concepts: list[str]
    captured_by: Role
    deleted: bool


class Provenance(Result):
    """Where an answer came from: the source kind, a reference, when, its hash, a note."""

    source: str
    reference: str | None
    time: str | None
    content_hash: str | None
    note: str | None


class SemanticSearch(Result):
    """Whether meaning-based matching was on for an ask, and why not when off."""

    enabled: bool
    reason: str | None


class Candidate(Result):
    """A stored item an ask weighed: its id, score, the decision and the reasons."""

    item: str
    score: Number
    decision: Decision
    reasons: list[str]


class AskResult(Result):
    """An ask (`mind ask --json`): the answer, which route gave it (memory or the model), the
    item and its provenance, the candidates weighed, and the turn when the model answered."""

    route: Route
    answer: str | None
    decision: Decision | None
    reasons: list[str]
    score: Number | None
    item: KnowledgeItem | None
    provenance: list[Provenance]
    semantic: SemanticSearch
    candidates: list[Candidate]
    turn: str | None
    stored: bool
    failure: Failure | None


class KnowledgeChange(Result):
    """A knowledge write (remember, verify/dispute/retract, edit, delete, approve, discard):
    the item, its revision, its state and confidence, and whether it was new."""

    id: str
    revision: int
    state: ValidationState
    confidence_ppm: int
    created: bool


class KnowledgeRow(Result):
    """One item of `mind knowledge list --json` (one whose words were forgotten: state
    `forgotten`, no content, no intent hash)."""

    item_id: str
    state: ValidationState | Literal["forgotten"]
    confidence_ppm: int | None
    freshness: Freshness | None
    reuse: ReusePolicy | None
    revision: int | None
    captured_by: Role | None
    question: str | None
    answer: str | None
    concepts: list[str] | None
    deleted: bool
    updated_at: str | None
    intent_hash: str | None


class KnowledgeList(Rows[KnowledgeRow]):
    """`mind knowledge list --json`: the items, oldest first."""


class KnowledgeShown(Result):
    """`mind knowledge show REF --json`: the item, its provenance and (asked for) every
    revision as recorded."""

    item: KnowledgeItem | None
    provenance: list[Provenance]
    history: Omitted[list[dict[str, JsonValue]]]


# -- recall ----------------------------------------------------------------------------------


class RecallItem(Result):
    """One remembered piece: its ledger position, channel, score, why, and its text."""

    id: int
    source_id: str | None
    kind: str
    channel: str
    score: Number
    reason: str
    tokens: int
    day: str | None
    text: str
    clipped: bool
    # A long message entered as a passage: start, end and whole length in characters of its
    # stored text (the whole: `mind query "SELECT text FROM messages WHERE position = <id>"`).
    excerpt: list[int] | None = None


class VectorsState(Result):
    """How far recall's vectors reach: `state` on, off, or missing (the offline model is not
    installed); `position`: every stored item up to this ledger position is embedded; `lag`:
    events past it not embedded yet (the vector projection runs beside turns, never in them)."""

    state: str
    position: int
    lag: int


class RecallResult(Result):
    """A recall (`mind recall --json`): what the mind would remember for a text at a budget,
    the tokens it fills, how many items did not fit, and how far its vectors reach."""

    items: list[RecallItem]
    tokens: int
    dropped: int
    vectors: VectorsState | None = None


# -- embeddings ------------------------------------------------------------------------------


class EmbeddingsResult(Result):
    """Texts embedded (`MindLedger.embed`): one vector per text, in order, by the mind's
    embedding model (`model`, as `embedding.model` names it), and the tokens it read."""

    model: str
    dimensions: int
    vectors: list[list[float]]
    tokens: int
