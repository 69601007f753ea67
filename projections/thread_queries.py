"""Threads over the read models: tension as of a time, triage, refusals, the gate's facts, and
the discriminator metrics. Tension is computed here from recorded times (domain/tension.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from domain.autonomy import reach, spearman
from domain.context_port import AutonomyState, ThreadMatch
from domain.settings import thread_params
from domain.tension import TensionParams, tension

COLUMNS = (
    "id, stream_id, label, content, status, origin, claimed_origin, opened_at, updated_at, "
    "resolved_at, verdict, reason, artifact, superseded_by, mentions, mentions_since_work, "
    "work_count, last_work_at, opened_position"
)
PENDING_BELOW_CYCLES = 100
RHO_PASS_BELOW = 0.7


def settings_as_of(con: duckdb.DuckDBPyConnection, as_of: datetime) -> TensionParams:
    """The tension law's parameters in effect at `as_of` (recorded `mind config set` changes)."""
    rows = con.execute(
        "SELECT key, arg_max(value, position) FROM config_changes WHERE time <= ? GROUP BY key",
        [as_of],
    ).fetchall()
    return thread_params(dict(rows))


def liveness_gaps(
    con: duckdb.DuckDBPyConnection, as_of: datetime
) -> list[tuple[datetime, datetime]]:
    """Stretches of more than a day with no recorded event at all, up to `as_of` (the projector
    records them as events arrive; the stretch from the last event to `as_of` is added here)."""
    rows = con.execute(
        "SELECT gap_start, gap_end FROM liveness_gaps WHERE gap_end <= $t "
        "UNION ALL SELECT max(time), $t FROM events WHERE time <= $t "
        "HAVING $t - max(time) > INTERVAL 24 HOUR",
        {"t": as_of},
    ).fetchall()
    return [(a, b) for a, b in rows]


def threads_by_tension(
    con: duckdb.DuckDBPyConnection,
    as_of: datetime,
    include_resolved: bool = False,
    params: TensionParams | None = None,
) -> list[dict[str, Any]]:
    """Threads opened by `as_of` with their tension then, highest first (ties: oldest first)."""
    p = params or settings_as_of(con, as_of)
    gaps = liveness_gaps(con, as_of)
    credits: dict[str, list[datetime]] = dict(
        con.execute(
            "SELECT stream_id, list(time ORDER BY position) FROM thread_work "
            "WHERE time <= ? GROUP BY 1",
            [as_of],
        ).fetchall()
    )
    where = "" if include_resolved else "AND status <> 'resolved'"
    cur = con.execute(f"SELECT {COLUMNS} FROM threads WHERE opened_at <= ? {where}", [as_of])
    names = [d[0] for d in cur.description]
    out = []
    for values in cur.fetchall():
        row = dict(zip(names, values, strict=True))
        value, hours = tension(
            row["opened_at"], credits.get(row["stream_id"], []), as_of, gaps, row["resolved_at"], p
        )
        row["tension"], row["hours_unworked"] = round(value, 6), round(hours, 4)
        out.append(row)
    out.sort(key=lambda r: (-r["tension"], r["opened_at"], r["opened_position"]))
    for row in out:
        for key in ("opened_at", "updated_at", "resolved_at", "last_work_at"):
            if row[key] is not None:
                row[key] = row[key].isoformat()
    return out


def find_threads(con: duckdb.DuckDBPyConnection, given: str) -> list[ThreadMatch]:
    """Threads whose short id or stream id starts with `given`, else whose label is `given`."""
    p = given.strip().lower()
    prefix = p[1:] if p.startswith("t") else p
    rows = []
    if prefix and all(c in "0123456789abcdef-" for c in prefix):
        rows = con.execute(
            "SELECT stream_id, id, label, status FROM threads WHERE starts_with(stream_id, ?)",
            [prefix.replace("-", "")],
        ).fetchall()
    if not rows:
        rows = con.execute(
            "SELECT stream_id, id, label, status FROM threads WHERE lower(label) = ? "
            "ORDER BY opened_position",
            [p],
        ).fetchall()
    return [ThreadMatch(*r) for r in rows]


def triage(rows: list[dict[str, Any]], p: TensionParams) -> dict[str, Any] | None:
    """The triage demand when more threads are live than max_live_threads: the live count, the
    cap, and the five lowest-tension candidates (oldest first on ties). `rows` are live threads."""
    if len(rows) <= p.max_live_threads:
        return None
    lowest = sorted(rows, key=lambda r: (r["tension"], r["opened_at"], r["opened_position"]))[:5]
    return {
        "live": len(rows),
        "cap": p.max_live_threads,
        "candidates": [
            {"id": r["id"], "tension": r["tension"], "label": r["label"]} for r in lowest
        ],
    }


def last_refusals(con: duckdb.DuckDBPyConnection, exclude_turn: str | None) -> list[dict[str, str]]:
    """The lines the previous finished turn had refused, and why."""
    rows = con.execute(
        "SELECT line, reason FROM rejections WHERE turn_id = ("
        "SELECT stream_id FROM turns WHERE status IN ('complete', 'failed') "
        "AND stream_id IS DISTINCT FROM ? ORDER BY seq DESC LIMIT 1) ORDER BY position",
        [exclude_turn],
    ).fetchall()
    return [{"line": line, "reason": reason} for line, reason in rows]


def autonomy_state(con: duckdb.DuckDBPyConnection, now: datetime) -> AutonomyState:
    """The facts the salience gate decides on."""
    live = threads_by_tension(con, now)
    ((last, cycles),) = con.execute("SELECT max(time), count(*) FROM ticks WHERE fired").fetchall()
    return AutonomyState(
        max_tension=live[0]["tension"] if live else 0.0,
        top_thread=live[0]["stream_id"] if live else None,
        live_threads=len(live),
        last_cycle_at=last,
        cycles=int(cycles),
    )


def metrics(con: duckdb.DuckDBPyConnection, now: datetime) -> dict[str, Any]:
    """Does tension order differ from recency order, and do old threads come back to the top?

    spearman_rho compares, over live threads, the order by tension with the order by staleness
    (hours since the thread last changed: opened, mentioned or worked). A value near 1 means
    tension is only recency in disguise: PASS below 0.7, PENDING under 100 cycles. reach counts
    cycles whose top thread changed and was opened more than 10 cycles earlier."""
    live = threads_by_tension(con, now)
    staleness = [
        (now - datetime.fromisoformat(r["updated_at"])).total_seconds() / 3600 for r in live
    ]
    rho = spearman([r["tension"] for r in live], staleness)
    cycles = con.execute(
        "SELECT time, top_thread FROM ticks WHERE fired AND time <= ? ORDER BY time, cycle",
        [now],
    ).fetchall()
    opened = dict(con.execute("SELECT stream_id, opened_at FROM threads").fetchall())
    ((ticks, suppressed),) = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE NOT fired) FROM ticks"
    ).fetchall()
    if len(cycles) < PENDING_BELOW_CYCLES:
        status = "PENDING"
    elif rho is not None and rho < RHO_PASS_BELOW:
        status = "PASS"
    else:
        status = "FAIL"
    return {
        "live_threads": len(live),
        "cycles": len(cycles),
        "ticks": int(ticks),
        "suppressed": int(suppressed),
        "spearman_rho": None if rho is None else round(rho, 4),
        "rho_status": status,
        "reach": reach(cycles, opened),
    }
