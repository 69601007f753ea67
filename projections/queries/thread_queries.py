"""Threads over the read models: tension as of a time, triage, refusals, the gate's facts, and
the discriminator metrics. Tension is computed here from recorded times (domain/tension.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.context_port import AutonomyState, ThreadMatch
from mindledger.domain.settings import thread_params
from mindledger.domain.tension import TensionParams, tension_at
from mindledger.projections.engine.kept_reads import KeptReads, kept_rows

TIMES = ("opened_at", "updated_at", "resolved_at", "last_work_at")
# Times leave DuckDB as microseconds: converting TIMESTAMPTZ values to Python datetimes costs
# more than everything else in `mind threads` at 10,000 threads (bench/threads.py).
# The columns `details` reads, in order.
NAMES = (
    *("id", "stream_id", "label", "content", "status", "origin", "claimed_origin"),
    *TIMES[:3],
    *("verdict", "reason", "artifact", "superseded_by", "mentions", "mentions_since_work"),
    *("work_count", "last_work_at", "opened_position"),
)
COLUMNS = ", ".join(f"epoch_us({n}) AS {n}" if n in TIMES else n for n in NAMES)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PENDING_BELOW_CYCLES = 100
RHO_PASS_BELOW = 0.7
# Up to this many credited threads, the threads block over-fetches instead of filtering them out.
OVERFETCH_CREDITED = 50
# A live thread: neither resolved nor forgotten (a forgotten one stays a row, with its words
# "[forgotten]", but never counts, ranks or reaches a context again).
LIVE = "status NOT IN ('resolved', 'forgotten')"
# Whether any turn has had a line refused (`last_refusals`).
ANY_REFUSAL = "SELECT 1 FROM rejections LIMIT 1"
# Runs a statement with its parameters, returning its rows (`ThreadReads.fetch`).
Fetch = Callable[[str, list[Any]], list[tuple[Any, ...]]]


class ThreadReads:
    """The threads block's reads of a connection, each a statement; a session's projector keeps
    their results instead (`projections.queries.kept_threads`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def fetch(self, sql: str, args: list[Any]) -> list[tuple[Any, ...]]:
        """The rows of `sql` with `args`."""
        return self.con.execute(sql, args).fetchall()

    def settings(self, as_of: datetime) -> TensionParams:
        """`settings_as_of`."""
        return settings_as_of(self.con, as_of)

    def known(self, as_of: datetime) -> tuple[list[tuple[float, float]], dict[str, list[float]]]:
        """The liveness gaps and the credited work up to `as_of`."""
        return liveness_gaps(self.con, as_of), credit_times(self.con, as_of)

    def live(self, as_of: datetime, limit: int) -> tuple[int, datetime, int]:
        """How many threads are live, opened by `as_of` and up to position `limit`, and the
        time and position to select them with (here `as_of` and `limit` themselves)."""
        ((live,),) = self.fetch(
            f"SELECT count(*) FROM threads WHERE {LIVE} AND opened_at <= ? "
            "AND opened_position <= ?",
            [as_of, limit],
        )
        return int(live), as_of, limit


def settings_as_of(con: duckdb.DuckDBPyConnection, as_of: datetime) -> TensionParams:
    """The tension law's parameters in effect at `as_of` (recorded `mind config set` changes)."""
    rows = con.execute(
        "SELECT key, arg_max(value, position) FROM config_changes WHERE time <= ? GROUP BY key",
        [as_of],
    ).fetchall()
    return thread_params(dict(rows))


def liveness_gaps(con: duckdb.DuckDBPyConnection, as_of: datetime) -> list[tuple[float, float]]:
    """Stretches of more than a day with no recorded event at all, up to `as_of`, in POSIX
    seconds (the projector records them as events arrive; the stretch from the last event to
    `as_of` is added here)."""
    rows = con.execute(
        "SELECT epoch(gap_start), epoch(gap_end) FROM liveness_gaps WHERE gap_end <= $t "
        "UNION ALL SELECT epoch(max(time)), epoch($t) FROM events WHERE time <= $t "
        "HAVING $t - max(time) > INTERVAL 24 HOUR",
        {"t": as_of},
    ).fetchall()
    return [(float(a), float(b)) for a, b in rows]


def ranked(
    con: duckdb.DuckDBPyConnection,
    as_of: datetime,
    include_resolved: bool = False,
    params: TensionParams | None = None,
    extra: str = "",
    args: list[Any] | None = None,
    known: tuple[list[tuple[float, float]], dict[str, list[float]]] | None = None,
    fetch: Fetch | None = None,
    opened_by: datetime | None = None,
) -> list[dict[str, Any]]:
    """Every thread opened by `as_of` (and matching `extra`, SQL after the WHERE clause, with
    `args`) with its tension then, highest first (ties: oldest first):
    stream_id, tension, hours_unworked, and times as POSIX seconds. Cheap: no datetime objects
    and no text per row; `details` adds the rest for the rows that are shown. `fetch` runs
    the statement; `opened_by`: the opening time it selects by, when not `as_of`."""
    p = params or settings_as_of(con, as_of)
    gaps, credits = known or (liveness_gaps(con, as_of), credit_times(con, as_of))
    where = "" if include_resolved else f"AND {LIVE}"
    rows = (fetch or ThreadReads(con).fetch)(
        "SELECT stream_id, epoch(opened_at), epoch(resolved_at), epoch(updated_at), "
        f"opened_position FROM threads WHERE opened_at <= ? {where} {extra}",
        [opened_by or as_of, *(args or [])],
    )
    t = as_of.timestamp()
    out = []
    for stream, opened, resolved, updated, position in rows:
        value, hours = tension_at(opened, credits.get(stream, ()), t, gaps, resolved, p)
        out.append(
            {
                "stream_id": stream,
                "tension": round(value, 6),
                "hours_unworked": round(hours, 4),
                "opened_epoch": opened,
                "updated_epoch": updated,
                "opened_position": position,
            }
        )
    out.sort(key=lambda r: (-r["tension"], r["opened_epoch"], r["opened_position"]))
    return out


def credit_times(con: duckdb.DuckDBPyConnection, as_of: datetime) -> dict[str, list[float]]:
    """Each thread's credited work up to `as_of`, in POSIX seconds."""
    return dict(
        con.execute(
            "SELECT stream_id, list(epoch(time) ORDER BY position) FROM thread_work "
            "WHERE time <= ? GROUP BY 1",
            [as_of],
        ).fetchall()
    )


def extremes(
    con: duckdb.DuckDBPyConnection,
    as_of: datetime,
    params: TensionParams,
    limit: int,
    k: int,
    n_low: int = 5,
    reads: ThreadReads | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """The k tensest and the n_low calmest live threads opened up to position `limit`, and how
    many are live, without evaluating every thread. A thread never credited has tension that
    grows with its age (the integral grows with effective hours, and an earlier start never
    shortens them), so among those the oldest are the tensest and the newest the calmest;
    threads with credited work are few and evaluated exactly. `reads`: where the rows come
    from (a statement each by default)."""
    # Separate statements: one statement with these reads as subqueries measured slower (3.5
    # against 2.4 ms at 1k events, 4.1 against 2.4 at 1M, fresh attach).
    reads = reads or ThreadReads(con)
    live, opened_by, limit = reads.live(as_of, limit)
    if not live:  # most turns of most minds: nothing more to ask
        return [], [], 0
    known = reads.known(as_of)
    credited = list(known[1])

    def select(extra: str, *args: Any) -> list[dict[str, Any]]:
        return ranked(
            con,
            as_of,
            params=params,
            extra=extra,
            args=list(args),
            known=known,
            fetch=reads.fetch,
            opened_by=opened_by,
        )

    def uncredited(newest: bool, n: int) -> list[dict[str, Any]]:
        order = " DESC" if newest else ""
        by = f"ORDER BY opened_at{order}, opened_position{order} LIMIT ?"
        if len(credited) > OVERFETCH_CREDITED:
            scope = "AND opened_position <= ? AND stream_id NOT IN (SELECT unnest(?::VARCHAR[]))"
            return select(f"{scope} {by}", limit, credited, n)
        # A few credited threads are dropped here, from as many more rows: a NOT IN filter made
        # DuckDB read every live thread's id (5.3 instead of 1.4 ms at 143,000 threads), but
        # evaluating thousands of extra rows costs more. `ranked` orders by tension; the choice
        # is by opening order.
        rows = select(f"AND opened_position <= ? {by}", limit, n + len(credited))
        rows = [r for r in rows if r["stream_id"] not in known[1]]
        rows.sort(key=lambda r: (r["opened_epoch"], r["opened_position"]), reverse=newest)
        return rows[:n]

    exact = (
        select(
            "AND opened_position <= ? AND stream_id IN (SELECT unnest(?::VARCHAR[]))",
            limit,
            credited,
        )
        if credited
        else []
    )
    oldest = uncredited(False, k)
    # twice as many as needed, so threads opened at the same instant are ordered right
    newest = uncredited(True, 2 * n_low)
    top = sorted(
        exact + oldest, key=lambda r: (-r["tension"], r["opened_epoch"], r["opened_position"])
    )
    return top[:k], lowest(exact + newest, n_low), int(live)


def details(
    con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]], fetch: Fetch | None = None
) -> list[dict[str, Any]]:
    """`rows` from `ranked`, in the same order, with every column of the thread (times as
    ISO-8601 text). `fetch` runs the statement."""
    if not rows:
        return []
    found = {
        v[1]: dict(zip(NAMES, v, strict=True))
        for v in (fetch or ThreadReads(con).fetch)(
            f"SELECT {COLUMNS} FROM threads WHERE stream_id IN (SELECT unnest(?))",
            [sorted({r["stream_id"] for r in rows})],
        )
    }
    out = []
    for r in rows:
        row = dict(found[r["stream_id"]])  # a thread can be in `rows` twice (tensest, calmest)
        for key in TIMES:
            if row[key] is not None:
                row[key] = (EPOCH + timedelta(microseconds=row[key])).isoformat()
        row["tension"], row["hours_unworked"] = r["tension"], r["hours_unworked"]
        out.append(row)
    return out


def threads_by_tension(
    con: duckdb.DuckDBPyConnection,
    as_of: datetime,
    include_resolved: bool = False,
    params: TensionParams | None = None,
) -> list[dict[str, Any]]:
    """Threads opened by `as_of` with their tension then, highest first (ties: oldest first)."""
    return details(con, ranked(con, as_of, include_resolved, params))


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


def lowest(rows: list[dict[str, Any]], n: int = 5) -> list[dict[str, Any]]:
    """The `n` live threads with the lowest tension, oldest first on ties."""
    key = "opened_epoch" if rows and "opened_epoch" in rows[0] else "opened_at"
    return sorted(rows, key=lambda r: (r["tension"], r[key], r["opened_position"]))[:n]


def triage(rows: list[dict[str, Any]], p: TensionParams) -> dict[str, Any] | None:
    """The triage demand when more threads are live than max_live_threads: the live count, the
    cap, and the five lowest-tension candidates (oldest first on ties). `rows`: the live threads
    with their details."""
    if len(rows) <= p.max_live_threads:
        return None
    return triage_demand(len(rows), p, lowest(rows))


def triage_demand(live: int, p: TensionParams, calmest: list[dict[str, Any]]) -> dict[str, Any]:
    """The demand itself, from the live count and the calmest threads (with details)."""
    return {
        "live": live,
        "cap": p.max_live_threads,
        "candidates": [
            {"id": r["id"], "tension": r["tension"], "label": r["label"]} for r in calmest
        ],
    }


def last_refusals(
    con: duckdb.DuckDBPyConnection, exclude_turn: str | None, kept: KeptReads | None = None
) -> list[dict[str, str]]:
    """The lines the previous finished turn had refused, and why (`kept`: the session's kept
    reads, which know whether any turn ever had a line refused)."""
    if kept is not None and not kept_rows(con, kept, ANY_REFUSAL, ("rejections",)):
        return []  # no turn has had a line refused
    rows = con.execute(
        "SELECT line, reason FROM rejections WHERE turn_id = ("
        "SELECT stream_id FROM turns WHERE status IN ('complete', 'failed') "
        "AND stream_id IS DISTINCT FROM ? ORDER BY seq DESC LIMIT 1) ORDER BY position",
        [exclude_turn],
    ).fetchall()
    return [{"line": line, "reason": reason} for line, reason in rows]


def autonomy_state(con: duckdb.DuckDBPyConnection, now: datetime) -> AutonomyState:
    """The facts the salience gate decides on."""
    top, _, live = extremes(con, now, settings_as_of(con, now), 1 << 62, 1, 0)
    ((last, cycles),) = con.execute("SELECT max(time), count(*) FROM ticks WHERE fired").fetchall()
    return AutonomyState(
        max_tension=top[0]["tension"] if top else 0.0,
        top_thread=top[0]["stream_id"] if top else None,
        live_threads=live,
        last_cycle_at=last,
        cycles=int(cycles),
    )


def metrics(con: duckdb.DuckDBPyConnection, now: datetime) -> dict[str, Any]:
    """Does tension order differ from recency order, and do old threads come back to the top?

    spearman_rho compares, over live threads, the order by tension with the order by staleness
    (hours since the thread last changed: opened, mentioned or worked). A value near 1 means
    tension is only recency in disguise: PASS below 0.7, PENDING under 100 cycles. reach counts
    cycles whose top thread changed and was opened more than 10 cycles earlier."""
    # Here, not at the top: the autonomy module imports the event classes (pydantic), which
    # a recall, whose context reads this module, does not need.
    from mindledger.domain.autonomy import reach, spearman

    live = ranked(con, now)
    staleness = [(now.timestamp() - r["updated_epoch"]) / 3600 for r in live]
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
