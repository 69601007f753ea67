"""The typed results of the ledger's and the mind's housekeeping use cases: status, log,
verify, query, forget, export and imports, the read models, reports, the graph, the model,
autonomy, init (see `mindledger.results` for what a result is)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, JsonValue

from mindledger.domain.forgetting import SelectorKind
from mindledger.results import Failure, Number, Omitted, Rejection, Result, ToolCall
from mindledger.results_rows import Rows
from mindledger.safe_text import plain


def _plain_rows(rows: Any) -> Any:
    """Rows from the read model with its values as JSON has them (times as ISO-8601, decimals
    as numbers: `safe_text.plain`, what `--json` always printed)."""
    return json.loads(json.dumps(rows, default=plain)) if isinstance(rows, list) else rows


# Values straight from the read model (a query's cells, replay's differing rows).
PlainRows = Annotated[list[dict[str, JsonValue]], BeforeValidator(_plain_rows)]


# -- the ledger --------------------------------------------------------------------------------


class Head(Result):
    """The ledger's last position and its hash."""

    position: int
    hash: str | None


class ProjectionLag(Result):
    """A read model's position and how far it is behind the ledger head."""

    name: str
    position: int
    lag: int


class StatusResult(Result):
    """`mind status --json`: where the mind lives, who it is, its head and its read models."""

    home: str
    backend: str
    name: str
    model: str
    ledger_id: str | None
    created_at: str | None
    head: Head
    projections: list[ProjectionLag]


class Event(Result):
    """One ledger event as `mind log --json` shows it: position, time, type, aggregate,
    version, hash and its payload (sealed text opened)."""

    position: int
    time: str | None
    type: str
    aggregate: str
    version: int
    hash: str | None
    payload: dict[str, JsonValue]


class Events(Rows[Event]):
    """`mind log --json` (and the events after a position): oldest first."""


class TurnPrompt(Result):
    """`mind log --turn REF --json`: the turn, its status, its model and the messages the
    model was sent (null when none were recorded); on a turn with tools, the calls its reply
    made, the tool results that were its message and the turn that asked for them."""

    turn: str
    status: Literal["started", "replied", "failed", "complete", "interrupted"]
    model: str
    messages: list[dict[str, Any]] | None
    tool_calls: Omitted[list[ToolCall]]
    tool_results: Omitted[list[dict[str, str]]]
    follows: Omitted[str]


class Anchor(Result):
    """A head kept outside the ledger and whether the ledger still holds it."""

    source: str
    position: int | None
    hash: str | None
    status: str


class VerifyResult(Result):
    """`mind verify --json`: whether every hash recomputes, the first bad position and why,
    the head, and each outside anchor."""

    ok: bool
    events: int
    first_bad: int | None
    reason: str | None
    head: str | None
    anchors: list[Anchor]


QueryRow = dict[str, JsonValue]


class QueryRows(Rows[QueryRow]):
    """`mind query SQL --json`: one object per row, keyed by column (columns are the query's,
    so the rows are open-ended; values as JSON has them)."""

    root: PlainRows


class ReportRows(Rows[QueryRow]):
    """`mind report NAME --json`: one object per row of the named report (its columns)."""

    root: PlainRows


# -- forgetting, export, imports ----------------------------------------------------------------


class ForgetResult(Result):
    """`mind forget --json` (and `--dry-run`): the plan's id, selector, what it reaches by
    kind, the events and keys, and whether it was forgotten (`already_forgotten` and
    `unsealed` appear only when they apply)."""

    dry_run: bool
    forget_id: str
    selector: SelectorKind
    value: str
    counts: dict[str, int]
    events: int
    keys: int
    context_turns: int
    unsealed: Omitted[int]
    forgotten: bool
    already_forgotten: Omitted[bool]


class ExportResult(Result):
    """`mind export --json`: the file written, its format, events, head, ledger id, size."""

    file: str
    format: Literal["jsonl", "md"]
    events: int
    head: str | None
    ledger_id: str
    bytes: int
    seconds: Number


class ChatImported(Result):
    """`mind import chat --json`: the conversation (`source`) and file, the messages added and
    skipped, and why."""

    source: str
    file: Omitted[str]  # the transcript's path (imports that name it)
    added: int
    skipped: int
    skipped_reasons: dict[str, int]


class ChatGPTImported(Result):
    """`mind import chatgpt --json`: conversations, messages added and skipped, and notes on
    what was summarised or stored differently."""

    source: str
    conversations: int
    added: int
    skipped: int
    skipped_reasons: dict[str, int]
    notes: dict[str, int]


class PMMKind(Result):
    """What one kind of PMM record became here, how many, and why when refused."""

    kind: str
    became: str
    count: int
    reason: Omitted[str]


class PMMImported(Result):
    """`mind import pmm --json`: the file's hash and key, events read, added and skipped, the
    chain's breaks and forks, and what each kind became."""

    source: str
    format: str
    sha256: str
    source_key: str
    events: int
    added: int
    skipped: int
    breaks: list[str]
    link_breaks: list[str]
    forks: list[str]
    kinds: list[PMMKind]


class BackupDone(Result):
    """`mind backup DEST --json`: the verified copy's folder, ledger id, events, head, files
    and size, the keys forgets had destroyed, pending forgets, what was left out."""

    dest: str
    ledger_id: str
    events: int
    head: str | None
    files: list[str]
    bytes: int
    verified: bool
    forgotten_keys: int
    pending_forgets: int
    skipped: str
    seconds: Number


class MindMade(Result):
    """`mind init --json`: the new mind's name, home, backend and ledger id."""

    name: str
    home: str
    backend: str
    ledger_id: str


class LedgerImported(Result):
    """`mind import ledger --json`: the file read into a new mind: its home, backend, events,
    head, ledger id, size."""

    file: str
    home: str
    backend: str
    events: int
    head: str | None
    ledger_id: str
    bytes: int
    seconds: Number


# -- read models, reports, graph, model, autonomy -----------------------------------------------


class VectorsProjected(Result):
    """The vector projection's pass: the `model` embedding (None: vectors off or the model
    missing), the items `embedded`, the `windows` of consecutive messages embedded (again), the
    `position` every item up to is embedded, seconds."""

    model: str | None
    embedded: int
    windows: int = 0
    position: int
    seconds: Number


class Projected(Result):
    """`mind project --json`: events applied, the position reached, seconds taken (and with
    --vectors, the vector projection's pass)."""

    applied: int
    position: int
    seconds: Number
    vectors: VectorsProjected | None = None


class Replayed(Result):
    """`mind replay --json`: where the rebuild went, events applied, and (checked) whether it
    equals the live read models and how not."""

    into: str | None
    applied: int
    seconds: Number
    checked: bool
    identical: bool | None
    differences: PlainRows
    swapped: bool


class GraphStats(Result):
    """`mind graph stats --json`: nodes by kind, edges by relation, components."""

    nodes: int
    edges: int
    by_kind: dict[str, int]
    by_relation: dict[str, int]
    components: int


class GraphNode(Result):
    """A node near another: its id, kind, label, distance in hops and text."""

    id: str
    kind: str
    label: str | None
    distance: int
    text: str | None


class GraphNeighbors(Rows[GraphNode]):
    """`mind graph neighbors NODE --json`: nearest first."""


class Setting(Result):
    """A setting's variable, its value as shown (secrets masked) and where it came from."""

    key: str
    value: JsonValue
    source: str


class ProviderVariable(Result):
    """A provider key or base URL in the environment, masked, and where it was found."""

    name: str
    kind: str
    value: str | None
    source: str
    where: str


class ModelShown(Result):
    """`mind model show --json`: the mind's model, the local model's place, the call settings
    and provider variables, and warnings."""

    model: str
    local_model_installed: bool
    local_model_path: str | None
    settings: list[Setting]
    provider_variables: list[ProviderVariable]
    warnings: list[str]


class TickTurn(Result):
    """The turn a fired tick ran: its id, status, reply, threads, refusals, failure."""

    id: str
    status: str
    reply: str
    threads: list[str]
    rejections: list[Rejection]
    failure: Failure | None


class TickResult(Result):
    """`mind tick --json`: whether the cycle fired and why, the tension, the cycle's status
    (complete, suppressed, no_model, ...) and the turn it ran."""

    tick: str
    fired: bool
    reason: str
    max_tension: Number
    top_thread: str | None
    cycle: int | None
    status: str
    note: str
    turn: TickTurn | None
