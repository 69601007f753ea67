"""The typed results of the direct commands and their listings: commitments, threads,
concepts, identity (see `mindledger.results` for what a result is)."""

from __future__ import annotations

from mindledger.domain.commitment import Origin
from mindledger.domain.thread import ThreadOrigin, Verdict
from mindledger.results import Number, Result
from mindledger.results_rows import Rows

# -- commitments ---------------------------------------------------------------------------


class CommitResult(Result):
    """`mind commit --json`: the commitment's CID and episode, and whether it was opened now
    (the same open text again is a no-op: `opened` false)."""

    cid: str
    episode: int
    opened: bool


class CloseResult(Result):
    """`mind close --json`: the commitment closed, its text and the reason given."""

    cid: str
    episode: int
    text: str
    closed: bool
    reason: str | None


class CommitmentRow(Result):
    """One commitment of `mind commitments --json` (a read-model row: a column may be null)."""

    cid: str
    text: str | None
    status: str  # open, closed, forgotten
    origin: Origin | None
    episode: int | None
    opened_at: str | None
    closed_at: str | None
    close_reason: str | None
    thread: str | None
    concepts: list[str] | None
    evidence: list[int] | None


class Commitments(Rows[CommitmentRow]):
    """`mind commitments [--all] --json`: open ones first, oldest first."""


# -- threads -------------------------------------------------------------------------------


class TriageCandidate(Result):
    """A calm thread the triage demand offers to resolve."""

    id: str
    tension: Number
    label: str | None


class TriageDemand(Result):
    """More threads are live than the cap allows: the count, the cap and the calmest."""

    live: int
    cap: int
    candidates: list[TriageCandidate]


class ThreadOpened(Result):
    """`mind thread open --json`: the thread's ids and the triage demand (null unless more
    threads are live than the cap allows)."""

    id: str
    stream_id: str
    triage: TriageDemand | None


class ThreadResolved(Result):
    """`mind thread resolve --json`: the thread and its verdict."""

    id: str
    stream_id: str
    verdict: Verdict


class ThreadRow(Result):
    """One thread of `mind threads --json`, with its tension (a read-model row: a column may
    be null)."""

    id: str
    stream_id: str
    label: str | None
    content: str | None
    status: str  # open, mentioned, worked, resolved, forgotten
    origin: ThreadOrigin | None
    claimed_origin: str | None
    opened_at: str | None
    updated_at: str | None
    resolved_at: str | None
    verdict: Verdict | None
    reason: str | None
    artifact: str | None
    superseded_by: str | None
    mentions: int | None
    mentions_since_work: int | None
    work_count: int | None
    last_work_at: str | None
    opened_position: int | None
    tension: Number
    hours_unworked: Number


class Threads(Rows[ThreadRow]):
    """`mind threads [--all] --json`: threads by tension, highest first."""


# -- concepts and identity -------------------------------------------------------------------


class ConceptDefined(Result):
    """`mind concept define --json`: the token and its definition's version."""

    token: str
    version: int


class ConceptAliased(Result):
    """`mind concept alias --json`: the alias and whether it was new."""

    token: str
    alias: str
    added: bool


class ConceptsRelated(Result):
    """`mind concept relate --json`: the relation and whether it was new."""

    source: str
    target: str
    relation: str
    added: bool


class Relation(Result):
    """A concept's relation to another."""

    relation: str
    target: str


class ConceptRow(Result):
    """One concept of `mind concepts --json`: definition, version, aliases, relations."""

    token: str
    definition: str | None
    version: int | None
    aliases: list[str] | None
    defined_at: str | None
    updated_at: str | None
    relations: list[Relation]


class Concepts(Rows[ConceptRow]):
    """`mind concepts --json`, by token."""


class IdentityChange(Result):
    """One change of the mind's identity: where, when, what, by whom."""

    position: int
    time: str | None
    change: str | None
    name: str | None
    model: str | None
    via: str | None
    reason: str | None
    turn: int | None  # the turn's number


class IdentityResult(Result):
    """`mind identity --json`: the name, model, ledger id, pending proposals and history
    (fields null while the read model holds no identity yet)."""

    name: str | None = None
    model: str | None = None
    ledger_id: str | None = None
    description: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    pending_proposals: list[str] | None = None
    history: list[IdentityChange]


class NameAdopted(Result):
    """`mind identity adopt --json`: the new name and the reason given."""

    name: str
    reason: str | None


class ModelSet(Result):
    """`mind model set --json`: the model later turns run on."""

    model: str
