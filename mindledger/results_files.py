"""The typed results of the floor's file and maintenance use cases: what was written where
(reports, table exports, the graph), bindings and metrics, the LoCoMo import, the embedded
model's install and stop, and a query's or report's table as columns and rows (for a
front-end that prints CSV or an aligned table)."""

from __future__ import annotations

from typing import Any

from mindledger.results import Number, Omitted, Result
from mindledger.results_listings import TriageDemand
from mindledger.results_rows import Rows


class ConceptBound(Result):
    """`mind concept bind TOKEN --json`: the concept and what it is bound to (a commitment's
    CID, a thread's short id or a ledger position)."""

    token: str
    kind: str  # commitment, thread or event
    target: str


class ThreadMetrics(Result):
    """`mind threads --metrics --json`: Spearman's rho between tension order and staleness
    order over live threads, its status, and reach."""

    live_threads: int
    cycles: int
    ticks: int
    suppressed: int
    spearman_rho: Number | None
    rho_status: str  # PENDING, PASS or FAIL
    reach: int


class LocalModelInstalled(Result):
    """`mind model install-local --json`: whether this call installed it, where it is."""

    installed: bool
    path: str | None
    message: str


class LocalModelStopped(Result):
    """`mind model stop-local --json`: whether a running server was stopped."""

    stopped: bool


class ServerStopped(Result):
    """`mind server stop --json`: whether a server was stopped; its pid, or whether a stale
    server.json was removed when none ran."""

    stopped: bool
    running: Omitted[bool]
    pid: Omitted[int]
    stale_file_removed: Omitted[bool]


class ReportWritten(Result):
    """`mind report NAME --out FILE --json` (and `--format png`): the file written."""

    report: str
    format: str
    path: str
    rows: Omitted[int]  # the text formats' rows (a picture has none)


class TablesExported(Result):
    """`mind export --format parquet|csv FOLDER --json`: one file per read-model table."""

    folder: str
    format: str
    files: list[str]


class GraphExported(Result):
    """`mind graph export --out FILE --json`: the file written, its format and size."""

    out: str
    format: str
    nodes: int
    edges: int


class GraphText(Result):
    """`mind graph export` to standard output: the whole graph as GraphML or node-link JSON
    text."""

    format: str
    text: str


class Triage(Result):
    """The triage demand `mind threads` warns of (`demand` null unless more threads are live
    than the cap allows)."""

    demand: TriageDemand | None


class LoCoMoSample(Result):
    """One sample of `mind import locomo --json`: messages added and skipped, and why."""

    sample: str
    added: int
    skipped: int
    skipped_reasons: dict[str, int]


class LoCoMoImported(Rows[LoCoMoSample]):
    """`mind import locomo --json`: what each sample's import did."""


class Table(Result):
    """A query's or a report's columns and rows as the read model gave them (values as
    DuckDB returns them), for front-ends that print CSV or a table; `records()` is the
    `--json` form."""

    columns: list[str]
    rows: list[tuple[Any, ...]]

    def records(self) -> list[dict[str, Any]]:
        """One object per row keyed by column (a non-finite float given by its name)."""
        from mindledger.queries import records

        return records(self.columns, self.rows)


class ExportAnchor(Result):
    """The hash kept elsewhere that an export was checked against, and where it was found."""

    hash: str
    position: int | None


class ExportVerified(Result):
    """`mind verify --export FILE --json`: whether the file's chain holds (`level`
    "integrity"), and with --deep whether it also imports and replays ("deep"); the first bad
    line and why, its events, head and ledger, and the anchor when one was given."""

    ok: bool
    level: str
    file: str
    line: int | None
    reason: str | None
    events: int | None
    head: str | None
    ledger_id: Omitted[str]
    genesis: Omitted[str]
    anchor: Omitted[ExportAnchor]
    seconds: Number


class DoctorCheck(Result):
    """One check of a home: ok, behind (a warning), fail or skipped; what to run to fix it."""

    name: str
    status: str
    detail: str
    fix: str


class OptionalPart(Result):
    """One optional part: whether it is present, its version, what it enables, how to add it."""

    name: str
    present: bool
    version: str | None
    detail: str
    enables: str
    install: str


class DoctorReport(Result):
    """`mind doctor --json`: `ok` (no home check failed), the checks, what `fix` changed, and
    every optional part."""

    home: str
    ok: bool
    checks: list[DoctorCheck]
    fixed: list[str]
    parts: list[OptionalPart]


class ConfigRow(Result):
    """One setting of `mind config show --json`: its value, where it came from, what it
    means and what it takes."""

    key: str
    value: Any
    default: bool
    meaning: str
    accepts: str | None
    source: str
    origin: str | None


class ConfigRows(Rows[ConfigRow]):
    """`mind config show --json`: the process settings, then this mind's (from its ledger)."""


class ConfigSet(Result):
    """`mind config set KEY VALUE --json`: the setting and whether it changed."""

    key: str
    value: str
    changed: bool
