"""The typed results of the floor's use cases: what `MindLedger`'s methods return, and what
every front-end prints. Each is a frozen pydantic model whose `model_dump(mode="json")` is the
command's `--json` object (the HTTP API's body, MCP's structured content); a list-shaped
result is a `RootModel` whose dump stays a list. This module holds the base classes and the
conversation's results (turn, ask, knowledge, recall); `results_listings` and
`results_ledger` hold the rest.

A field a use case sometimes leaves out is `Omitted`: None when absent, and left out of the
dump again, so the JSON is the same as before these models existed. Results also read like
the dicts they replaced (`result["reply"]`, `rows[0]`, `for row in rows`), for programs
written against those."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, RootModel

from mindledger.domain.ask import Route
from mindledger.domain.knowledge import Freshness, ReusePolicy, Role, ValidationState
from mindledger.domain.knowledge_assessment import Decision

T = TypeVar("T")
Row = TypeVar("Row")

# A figure that is a whole number or a fraction as it happens (a score of exactly 1 stays 1).
Number = int | float
# A key some results carry only sometimes: None when absent, and then left out of the dump.
Omitted = Annotated[T | None, Field(default=None, exclude_if=lambda v: v is None)]


class Result(BaseModel):
    """A use case's result: frozen, no unknown keys; also read by key like the dict it was."""

    # Schemas build on first use: a command pays only for the results it returns.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    def __getitem__(self, key: str) -> Any:
        """The field named `key` (the JSON key), as `result["key"]` read the old dicts."""
        if key not in type(self).model_fields:
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        """Whether the JSON has `key` (an `Omitted` field left out counts as absent)."""
        return isinstance(key, str) and key in self.model_dump(mode="json")


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


# -- turns ---------------------------------------------------------------------------------


class Failure(Result):
    """Why a model call failed: its kind (connection, timeout, ...) and a one-line message."""

    kind: str
    message: str


class ContextItem(Result):
    """One piece of memory a turn put in front of the model, and why (its text stays in the
    ledger: `mind recall` shows texts)."""

    id: int
    kind: str
    channel: str
    reason: str
    score: Number
    tokens: int
    source_id: str | None
    clipped: bool
    stream: str | None
    day: str | None
    # A long message's passage: start, end and whole length in characters of its stored text.
    excerpt: list[int] | None = None


class Rejection(Result):
    """A control line the turn refused, and why."""

    line: str
    reason: str


class IdentityChanges(Result):
    """The mind's name after a turn and what the turn proposed or adopted."""

    name: str | None
    changes: list[str]


class EventSpan(Result):
    """The ledger positions a write landed at (first and last; null when none)."""

    first: int | None
    last: int | None


class ToolFunction(Result):
    """The function a tool call names and its arguments (JSON text, as the model wrote it)."""

    name: str
    arguments: str


class ToolCall(Result):
    """A tool the reply calls, in OpenAI's shape (the id is the mind's: the result that
    answers it names this turn)."""

    id: str
    type: Literal["function"]
    function: ToolFunction


class TurnResult(Result):
    """A turn (`mind turn --json`, the HTTP API's turn, MCP's turn tool): the reply, what it
    changed, the memory it was given and the model's figures."""

    turn: str
    seq: int
    status: Literal["complete", "failed", "interrupted", "started"]
    reply: str
    reply_raw: str
    opened: list[str]
    closed: list[str]
    claims: list[dict[str, JsonValue]]
    rejections: list[Rejection]
    identity: IdentityChanges
    threads: list[str]
    context: list[ContextItem]
    context_tokens: int
    model: str
    usage: dict[str, int]
    latency_ms: Number
    finish_reason: str
    cut_off: bool
    failure: Failure | None
    events: EventSpan
    # Only on a turn with tools: the calls its reply made (the turn is complete; the results
    # start the next turn), and the turn whose calls this one's message answers.
    tool_calls: Omitted[list[ToolCall]]
    follows: Omitted[str]


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
