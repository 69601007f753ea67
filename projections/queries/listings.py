"""Listings over the read models: plain values for the CLI and, later, the turn pipeline."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.errors import InvalidInputError


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _iso(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        for key, value in row.items():
            if hasattr(value, "isoformat"):
                row[key] = value.isoformat()
    return rows


_COMMITMENT = (
    "cid",
    "text",
    "status",
    "origin",
    "episode",
    "opened_at",
    "closed_at",
    "close_reason",
    "thread",
    "concepts",
    "evidence",
)


def commitments(con: duckdb.DuckDBPyConnection, include_closed: bool) -> list[dict[str, Any]]:
    """Commitments, open ones first, oldest first."""
    where = "" if include_closed else "WHERE status = 'open'"
    found = con.execute(
        f"SELECT {', '.join(_COMMITMENT)} FROM commitments {where} "
        "ORDER BY status = 'closed', opened_position"
    ).fetchall()
    # `_iso` for its two times only: a catch-up's summary lists every open commitment (20,000
    # at 100k events), where `_iso`'s test of every value was a fifth of the listing.
    rows: list[dict[str, Any]] = []
    for found_row in found:
        row = dict(zip(_COMMITMENT, found_row, strict=True))
        opened, closed = found_row[5], found_row[6]
        if opened is not None:
            row["opened_at"] = opened.isoformat()
        if closed is not None:
            row["closed_at"] = closed.isoformat()
        rows.append(row)
    return rows


def _iso_sql(column: str) -> str:
    """SQL for `datetime.isoformat()` of a TIMESTAMPTZ as the connection's client reads it (in
    its TimeZone): microseconds only when there are some; DuckDB's `%z` says "+00" where
    Python says "+00:00" (and "+05:30" as Python does)."""
    return (
        f"strftime({column}, CASE WHEN epoch_us({column}) % 1000000 = 0 "
        "THEN '%Y-%m-%dT%H:%M:%S%z' ELSE '%Y-%m-%dT%H:%M:%S.%f%z' END) || "
        f"CASE WHEN length(strftime({column}, '%z')) = 3 THEN ':00' ELSE '' END"
    )


def open_commitments_json(con: duckdb.DuckDBPyConnection) -> str:
    """`commitments(con, include_closed=False)` as one JSON array, built by DuckDB: a catch-up's
    summary lists every open commitment (21,429 at 100k events), which cost ~105 ms of CPU
    made into Python values and encoded, and ~20 ms as DuckDB's own JSON."""
    fields = ", ".join(
        f"'{name}', {_iso_sql(name) if name.endswith('_at') else name}" for name in _COMMITMENT
    )
    ((text,),) = con.execute(
        f"SELECT coalesce(to_json(list(json_object({fields}) ORDER BY opened_position)), '[]') "
        "FROM commitments WHERE status = 'open'"
    ).fetchall()
    return str(text)


def concepts(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Concepts with their definition, version, aliases and relations."""
    rows = _dicts(
        con.execute(
            "SELECT c.token, c.definition, c.version, c.aliases, c.defined_at, c.updated_at, "
            "coalesce(list({'relation': r.relation, 'target': r.target} ORDER BY r.position) "
            "FILTER (WHERE r.position IS NOT NULL), []) AS relations "
            "FROM concepts c LEFT JOIN concept_relations r ON r.source = c.token "
            "GROUP BY ALL ORDER BY c.token"
        )
    )
    return _iso(rows)


def identity(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """The identity row and its history of changes."""
    rows = _iso(
        _dicts(
            con.execute(
                "SELECT name, model, ledger_id, description, created_at, updated_at, "
                "pending_proposals "
                "FROM identity"
            )
        )
    )
    history = _iso(
        _dicts(
            con.execute(
                "SELECT position, time, change, name, model, via, reason, turn "
                "FROM identity_history "
                "ORDER BY position"
            )
        )
    )
    return {**(rows[0] if rows else {}), "history": history}


def ledger_point(
    con: duckdb.DuckDBPyConnection, position: int | None, time: datetime | None
) -> tuple[int, datetime | None]:
    """`--as-of`: (position, time) of a point in the ledger given by either. A position's time
    is its event's; a time's position is the last event recorded at or before it (0: none).
    Raises InvalidInputError for a position past the head."""
    if position is not None:
        row = con.execute("SELECT time FROM events WHERE position = ?", [position]).fetchone()
        if row is None:
            head = con.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()
            raise InvalidInputError(
                f"there is no event at position {position} (the ledger ends at "
                f"{head[0] if head else 0})"
            )
        when: datetime = row[0]
        return position, when.astimezone(UTC)
    row = con.execute(
        "SELECT coalesce(max(position), 0) FROM events WHERE time <= ?", [time]
    ).fetchone()
    return (int(row[0]) if row else 0), time
