"""The floor's use cases that read or write files, or run long: exports and imports (with a
`progress` callable, `mindledger.progress`), reports and the graph written to files, tables for
front-ends that print CSV, concept bindings and thread metrics. Methods
`MindLedger` inherits; writes to the ledger hold the mind's write lock."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindledger.checked import checked_methods
from mindledger.compose import Home
from mindledger.progress import Told, counts, telling
from mindledger.rules import AsOf, parse_as_of

if TYPE_CHECKING:
    from mindledger.results_files import (
        ConceptBound,
        GraphExported,
        GraphText,
        LoCoMoImported,
        ReportWritten,
        Table,
        TablesExported,
        ThreadMetrics,
        Triage,
    )
    from mindledger.results_ledger import (
        BackupDone,
        ChatGPTImported,
        ExportResult,
        PMMImported,
        Projected,
        Replayed,
    )
    from mindledger.vector_projection import VectorFollower

# How a front-end renders a table's columns and rows as text (CSV, JSON, aligned).
Render = Callable[[list[str], list[tuple[Any, ...]]], str]


def _as_of(value: AsOf | str | None) -> AsOf | None:
    return parse_as_of(value, "as_of") if isinstance(value, str) else value


@checked_methods
class FileCommands:
    """Exports, imports, files written, tables, bindings, metrics."""

    home: Home
    write_lock: threading.RLock

    def export(
        self,
        folder: str | Path,
        fmt: str = "jsonl",
        force: bool = False,
        progress: Told | None = None,
    ) -> ExportResult:
        """`mind export --format jsonl|md FOLDER --json`: the whole ledger (jsonl: every hash
        and the keys of its sealed text, so keep it private) or a readable transcript (md);
        an earlier export's file there is refused unless `force`. `progress(done, total,
        doing)` hears the events written."""
        from mindledger.domain.errors import InvalidInputError
        from mindledger.export import FILE_NAMES, export_ledger
        from mindledger.results_ledger import ExportResult

        if fmt not in FILE_NAMES:
            raise InvalidInputError(
                f"format {fmt!r} is not one of {', '.join(FILE_NAMES)}", param="fmt"
            )
        where = Path(folder).expanduser()
        exported = export_ledger(self.home, where, fmt, telling(progress), force=force)
        return ExportResult.model_validate(exported)

    def export_tables(
        self, folder: str | Path, fmt: str = "parquet", force: bool = False
    ) -> TablesExported:
        """`mind export --format parquet|csv FOLDER --json`: every read-model table as a file
        in `folder`; files of those names already there are refused unless `force`."""
        from mindledger.reports import export_tables
        from mindledger.results_files import TablesExported

        written = export_tables(self.home, Path(folder).expanduser(), fmt, force)
        return TablesExported.model_validate(written)

    def import_pmm(
        self, path: str | Path, *, accept_broken: bool = False, progress: Told | None = None
    ) -> PMMImported:
        """`mind import pmm FILE --json`: a Persistent Mind Model ledger (`progress` hears
        the events imported once the file is read)."""
        from mindledger.imports import import_pmm
        from mindledger.results_ledger import PMMImported

        on_batch, on_total = counts(progress, "importing")
        with self.write_lock:
            imported = import_pmm(
                self.home, Path(path).expanduser(), accept_broken, on_batch, on_total
            )
        return PMMImported.model_validate(imported)

    def import_chatgpt(self, path: str | Path, *, progress: Told | None = None) -> ChatGPTImported:
        """`mind import chatgpt FILE --json`: a ChatGPT data export (json or zip; `progress`
        hears the messages imported once the file is read)."""
        from mindledger.imports import import_chatgpt
        from mindledger.results_ledger import ChatGPTImported

        on_batch, on_total = counts(progress, "importing")
        with self.write_lock:
            imported = import_chatgpt(self.home, Path(path).expanduser(), on_batch, on_total)
        return ChatGPTImported.model_validate(imported)

    def import_locomo(self, path: str | Path, sample: str | None = None) -> LoCoMoImported:
        """`mind import locomo FILE [--sample ID] --json`: the LoCoMo benchmark file (only
        `sample`, e.g. conv-26, when given), every turn with its speaker, time and dia_id."""
        from mindledger.imports import import_locomo
        from mindledger.results_files import LoCoMoImported

        with self.write_lock:
            imported = import_locomo(self.home, Path(path).expanduser(), sample)
        return LoCoMoImported.model_validate(imported)

    def project(
        self, progress: Told | None = None, vectors: bool = False, rebuild_vectors: bool = False
    ) -> Projected:
        """`mind project --json`: the read models caught up to the ledger head (`progress`
        hears the events applied); `vectors`: then the vector projection too (every stored
        item embedded; `rebuild_vectors`: again from position 0)."""
        from mindledger.projection import catch_up
        from mindledger.results_ledger import Projected

        done = catch_up(self.home, telling(progress))
        if vectors or rebuild_vectors:
            from mindledger.vector_projection import catch_up as embed_items

            done["vectors"] = embed_items(self.home, rebuild=rebuild_vectors)
        return Projected.model_validate(done)

    def follow_vectors(self) -> VectorFollower:
        """The vector projection started as a background thread of this process (`mind serve`
        runs one per mind): it embeds new stored items as the ledger moves, giving way (between
        two batches) while this mind writes (a turn); `stop()` it."""
        from mindledger.vector_projection import VectorFollower

        lock = self.write_lock

        def writing() -> bool:
            if not lock.acquire(blocking=False):
                return True
            lock.release()
            return False

        return VectorFollower(self.home, busy=writing).start()

    def follow(
        self,
        on_start: Callable[[], None] | None = None,
        on_batch: Callable[[int, int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Projected:
        """`mind project --follow --json`: keep the read models at the head, publishing after
        every batch, until SIGINT or SIGTERM or `should_stop()` (asked before each look at the
        ledger); `on_start` hears that following began, `on_batch` each batch's events
        applied and the position reached."""
        from mindledger.projection import follow
        from mindledger.results_ledger import Projected

        return Projected.model_validate(follow(self.home, on_start, on_batch, should_stop))

    def replay(
        self,
        target: str | Path | None = None,
        *,
        check: bool = False,
        swap: bool = False,
        progress: Told | None = None,
    ) -> Replayed:
        """`mind replay --json`: the read models rebuilt from position 0 into `target` (a new
        DuckDB file; default a scratch one); `swap`: put in place of the live ones; `check`:
        compared with them; `progress` hears the events applied."""
        from mindledger.projection import replay
        from mindledger.results_ledger import Replayed

        where = Path(target).expanduser() if target is not None else None
        with self.write_lock:
            replayed = replay(self.home, where, check, swap, telling(progress))
        return Replayed.model_validate(replayed)

    def backup(self, dest: str | Path, progress: Told | None = None) -> BackupDone:
        """`mind backup DEST --json`: a verified copy of the mind (ledger, key store,
        settings) in a new or empty folder, taken while it keeps writing (no write lock);
        `progress` hears the pages copied."""
        from mindledger.backup import backup_home
        from mindledger.results_ledger import BackupDone

        copied = backup_home(self.home, Path(dest).expanduser(), telling(progress))
        return BackupDone.model_validate(copied)

    def report_table(self, name: str) -> Table:
        """A named report's columns and rows (`commitments`, `activity`), for a front-end
        that prints CSV or a table (`report` gives the rows as objects)."""
        from mindledger.reports import report_table
        from mindledger.results_files import Table

        columns, rows = report_table(self.home, name)
        return Table(columns=columns, rows=rows)

    def report_png(self, name: str, out: str | Path | None = None) -> ReportWritten:
        """`mind report NAME --format png [--out FILE] --json`: the report drawn as a PNG at
        `out` (default report-NAME.png; `-` is standard output)."""
        from mindledger.reports import report_png
        from mindledger.results_files import ReportWritten

        where = Path(out).expanduser() if out is not None else None
        return ReportWritten.model_validate(report_png(self.home, name, where))

    def report_file(self, name: str, out: str | Path, fmt: str, render: Render) -> ReportWritten:
        """`mind report NAME --format FMT --out FILE --json`: the report written to `out` as
        the text `render(columns, rows)` makes (the front-end's CSV, JSON or table)."""
        from mindledger.reports import report_to_file
        from mindledger.results_files import ReportWritten

        written = report_to_file(self.home, name, Path(out).expanduser(), fmt, render)
        return ReportWritten.model_validate(written)

    def query_table(
        self,
        sql: str,
        params: dict[str, str] | None = None,
        *,
        seconds: float | None = None,
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> Table:
        """`mind query SQL` as columns and rows: read-only SQL in the sandbox; a limit given
        here (`seconds`, `max_rows`, `max_bytes`) wins over the home's query settings."""
        from mindledger.queries import run_user_query
        from mindledger.results_files import Table

        columns, rows = run_user_query(self.home, sql, params or {}, seconds, max_rows, max_bytes)
        return Table(columns=columns, rows=rows)

    def graph_text(self, fmt: str = "graphml") -> GraphText:
        """`mind graph export`: the whole graph as GraphML or node-link JSON text."""
        from mindledger.graph import graph_text
        from mindledger.results_files import GraphText

        return GraphText(format=fmt, text=graph_text(self.home, fmt))

    def export_graph(self, out: str | Path, fmt: str = "graphml") -> GraphExported:
        """`mind graph export --out FILE --json`: the graph written to `out` (GraphML or
        JSON; the file is private: it holds commitments' and concepts' words)."""
        from mindledger.graph import export_graph
        from mindledger.results_files import GraphExported

        return GraphExported.model_validate(export_graph(self.home, Path(out).expanduser(), fmt))

    def bind_concept(
        self,
        token: str,
        *,
        commitment: str | None = None,
        thread: str | None = None,
        position: int | None = None,
    ) -> ConceptBound:
        """`mind concept bind TOKEN --json`: bind a concept to exactly one of a commitment
        (CID), a thread (id or prefix) or a ledger position."""
        from mindledger.listings import bind_concept
        from mindledger.results_files import ConceptBound

        with self.write_lock:
            bound = bind_concept(self.home, token, commitment, thread, position)
        return ConceptBound.model_validate(bound)

    def thread_metrics(self, as_of: AsOf | str | None = None) -> ThreadMetrics:
        """`mind threads --metrics --json`: whether tension order differs from staleness
        order (Spearman's rho) and how often old threads come back to the top."""
        from mindledger.results_files import ThreadMetrics
        from mindledger.threads import thread_metrics

        return ThreadMetrics.model_validate(thread_metrics(self.home, _as_of(as_of)))

    def thread_triage(self, as_of: AsOf | str | None = None) -> Triage:
        """The triage demand `mind threads` warns of: more threads live than the cap allows
        (`demand` None when not)."""
        from mindledger.results_files import Triage
        from mindledger.threads import thread_listing

        return Triage.model_validate({"demand": thread_listing(self.home, False, _as_of(as_of))[1]})
