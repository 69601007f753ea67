"""Read-only SQL over the read models, named reports, and exports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from domain.errors import MindError
from projections.engine.schema import TABLES


class QueryError(MindError):
    """Raised when a query is not a read, or DuckDB rejects it."""


ALLOWED = {"SELECT", "EXPLAIN"}


def run_query(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, str]
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one read-only statement with named parameters ($name); returns columns and rows."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise QueryError(_one_line(e)) from None
    if len(statements) != 1:
        raise QueryError(f"give exactly one SQL statement (got {len(statements)})")
    kind = statements[0].type.name
    if kind not in ALLOWED:
        raise QueryError(f"{kind} statements are refused: `mind query` only reads (use SELECT)")
    # No file access from a query: a read-only connection could otherwise still COPY TO a file.
    access = con.execute("SELECT current_setting('enable_external_access')").fetchone()
    if not access or access[0]:
        raise QueryError("user SQL runs only on a sandboxed connection (duckdb_files.sandboxed)")
    con.execute("SET python_enable_replacements = false")  # no Python variables as tables
    try:
        cur = con.execute(sql, params or None)
        return [d[0] for d in cur.description], cur.fetchall()
    except duckdb.Error as e:
        raise QueryError(_one_line(e)) from None


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


def export_tables(con: duckdb.DuckDBPyConnection, folder: Path, fmt: str) -> list[Path]:
    """Write every read-model table to `folder` as Parquet or CSV; returns the files."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table in TABLES:
        path = folder / f"{table}.{fmt}"
        options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
        con.execute(f"COPY {table} TO '{path}' ({options})")
        written.append(path)
    return written
