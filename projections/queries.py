"""Listings over the read models: plain values for the CLI and, later, the turn pipeline."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _iso(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        for key, value in row.items():
            if hasattr(value, "isoformat"):
                row[key] = value.isoformat()
    return rows


def commitments(con: duckdb.DuckDBPyConnection, include_closed: bool) -> list[dict[str, Any]]:
    """Commitments, open ones first, oldest first."""
    where = "" if include_closed else "WHERE status = 'open'"
    return _iso(
        _dicts(
            con.execute(
                "SELECT cid, text, status, origin, episode, opened_at, closed_at, close_reason, "
                "thread, "
                f"concepts, evidence FROM commitments {where} "
                "ORDER BY status = 'closed', opened_position"
            )
        )
    )


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


def liveness_gaps(
    con: duckdb.DuckDBPyConnection, as_of: datetime
) -> list[tuple[datetime, datetime]]:
    """Stretches of more than a day with no recorded event at all, up to `as_of`."""
    rows = con.execute(
        "SELECT prev, time FROM (SELECT time, lag(time) OVER (ORDER BY position) AS prev "
        "FROM events WHERE time <= $t) WHERE time - prev > INTERVAL 24 HOUR "
        "UNION ALL SELECT max(time), $t FROM events WHERE time <= $t "
        "HAVING $t - max(time) > INTERVAL 24 HOUR",
        {"t": as_of},
    ).fetchall()
    return [(a, b) for a, b in rows]


def threads_by_tension(
    con: duckdb.DuckDBPyConnection, as_of: datetime, include_resolved: bool = False
) -> list[dict[str, Any]]:
    """Threads with their tension as of `as_of`, highest first (ties: oldest first)."""
    from domain.tension import tension

    gaps = liveness_gaps(con, as_of)
    credits = dict(
        con.execute(
            "SELECT aggregate_id, list(time ORDER BY position) FROM events "
            "WHERE type = 'mind.thread.worked' AND time <= ? GROUP BY 1",
            [as_of],
        ).fetchall()
    )
    rows = threads(con, include_resolved)
    for row in rows:
        opened = datetime.fromisoformat(row["opened_at"])
        resolved = datetime.fromisoformat(row["resolved_at"]) if row["resolved_at"] else None
        if opened > as_of:
            continue
        value, hours = tension(opened, credits.get(row["stream_id"], []), as_of, gaps, resolved)
        row["tension"], row["hours_unworked"] = round(value, 6), round(hours, 4)
    rows = [r for r in rows if datetime.fromisoformat(r["opened_at"]) <= as_of]
    rows.sort(key=lambda r: (-r["tension"], r["opened_at"], r["id"]))
    return rows


def threads(con: duckdb.DuckDBPyConnection, include_resolved: bool) -> list[dict[str, Any]]:
    """Threads, live ones by default, oldest first."""
    where = "" if include_resolved else "WHERE status <> 'resolved'"
    return _iso(
        _dicts(
            con.execute(
                "SELECT id, stream_id, label, content, status, origin, opened_at, updated_at, "
                "resolved_at, verdict, reason, artifact, superseded_by, mentions, work_count, "
                f"last_work_at, tension FROM threads {where} ORDER BY opened_at, stream_id"
            )
        )
    )


def thread_streams(con: duckdb.DuckDBPyConnection, prefix: str) -> list[str]:
    """Full stream ids of threads whose short id or stream id starts with `prefix`."""
    p = prefix.strip().lower()
    p = p[1:] if p.startswith("t") else p
    return [
        r[0]
        for r in con.execute(
            "SELECT stream_id FROM threads WHERE starts_with(stream_id, ?)", [p]
        ).fetchall()
    ]


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
