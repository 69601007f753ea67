"""Read-only SQL over the read models, named reports, and exports."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.errors import MindError


class QueryError(MindError):
    """Raised when a query is not a read, or DuckDB rejects it."""


class QueryStoppedError(QueryError):
    """Raised when a query ran past its time limit or was interrupted (Ctrl-C)."""


ALLOWED = {"SELECT", "EXPLAIN"}
CHUNK_ROWS = 2048  # rows fetched at a time, so the caps stop a result before it is all built
RESTOP_S = 0.05  # how often a stopping query is interrupted again (see `run_query`)


@dataclass(frozen=True)
class QueryLimits:
    """How long a user query may run and how much it may return (`mind query` options)."""

    seconds: float = 30.0
    rows: int = 100_000
    bytes: int = 64 * 1024 * 1024  # the result's values as text, roughly what is printed


@dataclass
class _Outcome:
    """What the worker thread hands back."""

    done: threading.Event = field(default_factory=threading.Event)
    stop: bool = False
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    error: BaseException | None = None


def run_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, str],
    limits: QueryLimits = QueryLimits(),
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one read-only statement with named parameters ($name); returns columns and rows.

    DuckDB has no statement timeout, and a query blocked in DuckDB never sees Python's Ctrl-C:
    so the statement runs on a worker thread while this one waits, and at the time limit or on
    Ctrl-C it calls `con.interrupt()` (again every RESTOP_S, as an interrupt that lands between
    two fetches stops nothing). Rows are fetched in chunks, so a cap ends the fetch early.
    """
    _check_statement(con, sql)
    outcome = _Outcome()
    worker = threading.Thread(
        target=_fetch, args=(con, sql, params, limits, outcome), name="mind-query", daemon=True
    )
    worker.start()
    try:
        finished = outcome.done.wait(limits.seconds)
        limit = f"{limits.seconds:g} s (`seconds`, or the setting query_timeout)"
        why = None if finished else f"ran longer than {limit}"
    except KeyboardInterrupt:
        why = "was interrupted (Ctrl-C)"
    if why is not None:
        outcome.stop = True
        while not outcome.done.wait(RESTOP_S):
            con.interrupt()
        worker.join()
        raise QueryStoppedError(f"the query {why} and was stopped; nothing was printed")
    worker.join()
    if outcome.error is not None:
        raise outcome.error
    return outcome.columns, outcome.rows


def _check_statement(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise QueryError(_one_line(e)) from None
    if len(statements) != 1:
        raise QueryError(f"give exactly one SQL statement (got {len(statements)})")
    kind = statements[0].type.name
    if kind not in ALLOWED:
        # DuckDB files INSTALL under LOAD; name the statement as the user wrote it.
        first = statements[0].query.split(None, 1)[:1]
        if kind == "LOAD" and first and first[0].upper() in ("INSTALL", "FORCE"):
            kind = "INSTALL"
        raise QueryError(f"{kind} statements are refused: `mind query` only reads (use SELECT)")
    # No file access from a query: a read-only connection could otherwise still COPY TO a file.
    access = con.execute("SELECT current_setting('enable_external_access')").fetchone()
    if not access or access[0]:
        raise QueryError("user SQL runs only on a sandboxed connection (duckdb_files.sandboxed)")
    con.execute("SET python_enable_replacements = false")  # no Python variables as tables


def _fetch(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, str],
    limits: QueryLimits,
    outcome: _Outcome,
) -> None:
    """The worker: execute and fetch chunk by chunk until done, capped or told to stop."""
    try:
        cur = con.execute(sql, params or None)
        outcome.columns = [d[0] for d in cur.description]
        size = 0
        while not outcome.stop:
            chunk = cur.fetchmany(CHUNK_ROWS)
            if not chunk:
                return
            outcome.rows.extend(chunk)
            if len(outcome.rows) > limits.rows:
                raise QueryError(
                    f"the result has more than {limits.rows} rows (`max_rows`, or the setting "
                    "query_max_rows); "
                    "add a LIMIT or an aggregate, or raise the cap"
                )
            size += _text_bytes(chunk)
            if size > limits.bytes:
                raise QueryError(
                    f"the result is larger than {limits.bytes} bytes (`max_bytes`, or the setting "
                    "query_max_bytes); "
                    "select fewer or shorter columns, or raise the cap"
                )
    except duckdb.InterruptException:
        pass  # the waiting thread stopped it and says why
    except duckdb.Error as e:
        outcome.error = QueryError(_one_line(e))
    except BaseException as e:  # a thread boundary: re-raised in the caller's thread
        outcome.error = e
    finally:
        if outcome.error is not None:
            outcome.rows = []
        outcome.done.set()


def _text_bytes(rows: list[tuple[Any, ...]]) -> int:
    """Roughly how many bytes these rows take as text."""
    return sum(
        len(v)
        if isinstance(v, str | bytes)
        else 8
        if isinstance(v, int | float | None)
        else len(str(v))
        for row in rows
        for v in row
    )


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())


REPORTS: dict[str, str] = {
    "commitments": """
        SELECT date_trunc('day', opened_at)::DATE AS day, origin,
               count(*) AS opened,
               count(*) FILTER (WHERE status = 'closed') AS closed,
               count(*) FILTER (WHERE status = 'open') AS still_open,
               round(median(epoch(closed_at - opened_at)) / 3600, 2) AS median_hours_to_close
        FROM commitments GROUP BY ALL ORDER BY day, origin""",
    "activity": """
        SELECT time::DATE AS day, type, count(*) AS events
        FROM events GROUP BY ALL ORDER BY day, type""",
}


def report(con: duckdb.DuckDBPyConnection, name: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """A named report's columns and rows."""
    if name not in REPORTS:
        raise QueryError(f"unknown report {name!r}; choose from {', '.join(REPORTS)}")
    cur = con.execute(REPORTS[name])
    return [d[0] for d in cur.description], cur.fetchall()


def copy_table(con: duckdb.DuckDBPyConnection, table: str, path: Path, fmt: str) -> None:
    """Write one read-model table to a new file at `path` as Parquet or CSV."""
    options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
    quoted = str(path).replace("'", "''")  # a folder may be named anything, quotes too
    try:
        con.execute(f"COPY {table} TO '{quoted}' ({options})")
    except duckdb.Error as e:
        raise QueryError(f"table {table}: {_one_line(e)}") from None
