"""User SQL on the sandboxed read model, within the home's query limits (`mind query`, the
API's query)."""

from __future__ import annotations

import math
from typing import Any

from mindledger.compose import (
    Home,
    sandboxed_read_model,
)


def records(columns: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Rows as objects keyed by column (what `--json` prints for a query or a report)."""
    return [dict(zip(columns, [_finite(v) for v in r], strict=True)) for r in rows]


def _finite(value: Any) -> Any:
    """JSON has no infinity or NaN (`1/0` in DuckDB is one): such a float is given as its name,
    "Infinity", "-Infinity" or "NaN", so every front-end prints valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def run_user_query(
    home: Home,
    sql: str,
    params: dict[str, str],
    seconds: float | None = None,
    max_rows: int | None = None,
    max_bytes: int | None = None,
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """User SQL on the sandboxed read model within the home's query limits (a limit given
    here wins over the settings): `mind query` and the HTTP API's query."""
    from mindledger.projections.queries.analytics import QueryLimits, run_query

    chosen = home.with_flags(
        query_timeout=("`seconds`", seconds),
        query_max_rows=("`max_rows`", max_rows),
        query_max_bytes=("`max_bytes`", max_bytes),
    ).settings
    limits = QueryLimits(chosen.query_timeout, chosen.query_max_rows, chosen.query_max_bytes)
    with sandboxed_read_model(home) as con:
        return run_query(con, sql, params, limits)


def query_records(home: Home, sql: str, params: dict[str, str]) -> list[dict[str, Any]]:
    """What `mind query --json` prints."""
    return records(*run_user_query(home, sql, params))
