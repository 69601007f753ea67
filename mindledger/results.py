"""The typed results of the floor's use cases: what `MindLedger`'s methods return, and what
every front-end prints. Each is a frozen pydantic model whose `model_dump(mode="json")` is the
command's `--json` object (the HTTP API's body, MCP's structured content); a list-shaped
result is a `Rows` (`results_rows`: a `RootModel` whose dump stays a list). This module holds
the base class and the turn's results; `results_knowledge` (knowledge, ask, recall, embed:
named here as well, loaded on first use), `results_listings`, `results_ledger` and
`results_files` the rest.

A field a use case sometimes leaves out is `Omitted`: None when absent, and left out of the
dump again, so the JSON is the same as before these models existed. Results also read like
the dicts they replaced (`result["reply"]`, `rows[0]`, `for row in rows`), for programs
written against those."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

T = TypeVar("T")

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


# The knowledge, ask, recall and embed results live in `results_knowledge`, loaded on first use.
KNOWLEDGE_RESULTS = frozenset(
    {
        "KnowledgeItem",
        "Provenance",
        "SemanticSearch",
        "Candidate",
        "AskResult",
        "KnowledgeChange",
        "KnowledgeRow",
        "KnowledgeList",
        "KnowledgeShown",
        "RecallItem",
        "VectorsState",
        "RecallResult",
        "EmbeddingsResult",
    }
)

if TYPE_CHECKING:  # named again here for type checkers (`X as X`: a re-export)
    from mindledger.results_knowledge import AskResult as AskResult
    from mindledger.results_knowledge import Candidate as Candidate
    from mindledger.results_knowledge import EmbeddingsResult as EmbeddingsResult
    from mindledger.results_knowledge import KnowledgeChange as KnowledgeChange
    from mindledger.results_knowledge import KnowledgeItem as KnowledgeItem
    from mindledger.results_knowledge import KnowledgeList as KnowledgeList
    from mindledger.results_knowledge import KnowledgeRow as KnowledgeRow
    from mindledger.results_knowledge import KnowledgeShown as KnowledgeShown
    from mindledger.results_knowledge import Provenance as Provenance
    from mindledger.results_knowledge import RecallItem as RecallItem
    from mindledger.results_knowledge import RecallResult as RecallResult
    from mindledger.results_knowledge import SemanticSearch as SemanticSearch
    from mindledger.results_knowledge import VectorsState as VectorsState
    from mindledger.results_rows import Rows as Rows


def __getattr__(name: str) -> Any:
    """`from mindledger.results import RecallResult` and the like: from `results_knowledge`;
    `Rows` from `results_rows` (a turn returns no list: pydantic's RootModel and the generic
    class cost it ~1.5 ms of CPU)."""
    if name == "Rows":
        from mindledger.results_rows import Rows

        return Rows
    if name in KNOWLEDGE_RESULTS:
        from mindledger import results_knowledge

        return getattr(results_knowledge, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
