"""The read-model queries behind the web page: turns with their context and claims, the event
timeline with filters, commitments with who opened and closed them, threads and their tension
over time, concepts and their relations, the knowledge tables.

Event payloads come back as the read model holds them, sealed fields as envelopes (a turn's
context and prompts as references to the ledger, engine/ledger_refs.py); the floor
(mindledger/web_reads.py) opens those a view shows. Times are ISO strings, JSON columns decoded.
"""

from __future__ import annotations

import bisect
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.errors import InvalidInputError
from mindledger.domain.settings import thread_params
from mindledger.domain.tension import TensionParams, tension_at
from mindledger.projections.queries import thread_queries

ANY_POSITION = 2**62
CURVE_POINTS = 48


def rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """A cursor's rows as dicts, times as ISO strings in UTC."""
    names = [d[0] for d in cur.description]
    out = []
    for values in cur.fetchall():
        row = dict(zip(names, values, strict=True))
        for key, value in row.items():
            if isinstance(value, datetime):
                row[key] = value.astimezone(UTC).isoformat()
        out.append(row)
    return out


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def turns(con: duckdb.DuckDBPyConnection, limit: int, before: int | None) -> list[dict[str, Any]]:
    """The latest turns (newest last) with the message, reply and outcome, for the chat view."""
    where, args = ("WHERE started_position < ?", [before]) if before else ("", [])
    found = rows(
        con.execute(
            "SELECT stream_id AS turn, seq, speaker, status, text, reply, model, failure_kind, "
            "failure, started_at, finished_at, started_position, finished_position, cut_off "
            f"FROM turns {where} ORDER BY started_position DESC LIMIT ?",
            [*args, limit],
        )
    )
    for row in found:
        row["turn"] = row["turn"].replace("-", "")
    return found[::-1]


def turn(con: duckdb.DuckDBPyConnection, key: str) -> dict[str, Any] | None:
    """One turn's row by its id without dashes (its `context`, `usage` and `rejections`
    decoded), else None."""
    found = rows(
        con.execute(
            "SELECT stream_id, seq, status, text, reply, reply_raw, model, usage, latency_ms, "
            "finish_reason, cut_off, failure_kind, failure, started_at, finished_at, "
            "started_position, finished_position, context, context_tokens, opened, closed, "
            "rejections FROM turns WHERE replace(stream_id, '-', '') = ?",
            [key],
        )
    )
    if not found:
        return None
    row = found[0]
    row["context"] = _json(row["context"]) or []
    row["usage"] = _json(row["usage"])
    row["rejections"] = _json(row["rejections"]) or []
    return row


def claims(con: duckdb.DuckDBPyConnection, stream: str) -> list[dict[str, Any]]:
    """The claims a turn (its stream id) recorded, in order."""
    found = rows(
        con.execute(
            "SELECT position, claim_type, payload FROM claims WHERE turn_id = ? ORDER BY position",
            [stream],
        )
    )
    for claim in found:
        claim["payload"] = _json(claim["payload"])
    return found


def effects(con: duckdb.DuckDBPyConnection, first: int, last: int) -> list[dict[str, Any]]:
    """The events after position `first` up to `last` that are not the turn's own (sealed)."""
    return rows(
        con.execute(
            "SELECT position, type, aggregate_id AS aggregate, version, payload FROM events "
            "WHERE position > ? AND position <= ? AND aggregate_kind NOT IN ('turn', "
            "'turn_numbers') ORDER BY position",
            [first, last],
        )
    )


def prompt_event(con: duckdb.DuckDBPyConnection, first: int, last: int) -> list[dict[str, Any]]:
    """The event that recorded the prompt a turn sent (replied or failed), at most one (sealed):
    the last attempt's."""
    return rows(
        con.execute(
            "SELECT position, type, aggregate_id AS aggregate, version, payload FROM events "
            "WHERE position > ? AND position <= ? "
            "AND type IN ('mind.turn.replied', 'mind.turn.generation_failed') "
            "ORDER BY position DESC LIMIT 1",
            [first, last],
        )
    )


# The fields of a turn's events that hold its tool use (decision 0022): the calls its reply
# made (Replied), the results that were its message and the turn they answer (Started).
TOOL_FIELDS = ("tool_calls", "tool_results", "follows")


def tool_events(con: duckdb.DuckDBPyConnection, streams: list[str]) -> list[dict[str, Any]]:
    """The Started and Replied events of these turns (ids without dashes) that hold tool use,
    oldest first, each payload cut to `TOOL_FIELDS` (still sealed): a page of turns opens
    only these, never the prompts their replies recorded."""
    held = " OR ".join(f"payload->>'$.{f}' IS NOT NULL" for f in TOOL_FIELDS)
    cut = ", ".join(f"'{f}', payload->'$.{f}'" for f in TOOL_FIELDS)
    return rows(
        con.execute(
            f"SELECT type, aggregate_id AS aggregate, version, json_object({cut}) AS payload "
            "FROM events WHERE aggregate_kind = 'turn' AND aggregate_id IN (SELECT unnest(?)) "
            f"AND type IN ('mind.turn.started', 'mind.turn.replied') AND ({held}) "
            "ORDER BY position",
            [streams],
        )
    )


def events_at(con: duckdb.DuckDBPyConnection, positions: list[int]) -> list[dict[str, Any]]:
    """The events at these positions (sealed)."""
    return rows(
        con.execute(
            "SELECT position, type, aggregate_id AS aggregate, version, payload FROM events "
            "WHERE position IN (SELECT unnest(?))",
            [positions],
        )
    )


@dataclass(frozen=True)
class EventFilter:
    """Which events the timeline shows: an aggregate kind, an aggregate id prefix, a time span."""

    kind: str | None = None
    aggregate: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def events_before(
    con: duckdb.DuckDBPyConnection, shown: EventFilter, end: int, limit: int
) -> list[dict[str, Any]]:
    """The newest `limit` events before position `end` that pass `shown` (sealed)."""
    clauses, args = ["TRUE"], list[Any]()
    filters: list[tuple[str, Any]] = [
        ("aggregate_kind = ?", shown.kind),
        (
            "replace(aggregate_id, '-', '') LIKE ?",
            shown.aggregate and shown.aggregate.replace("-", "") + "%",
        ),
        ("time >= ?", shown.since),
        ("time <= ?", shown.until),
    ]
    for clause, value in filters:
        if value:
            clauses.append(clause)
            args.append(value)
    return rows(
        con.execute(
            "SELECT position, time, type, aggregate_id AS aggregate, aggregate_kind AS kind, "
            f"version, hash, payload FROM events WHERE {' AND '.join(clauses)} "
            "AND position < ? ORDER BY position DESC LIMIT ?",
            [*args, end, limit],
        )
    )


def event_kinds(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every aggregate kind the ledger holds, by name."""
    found = con.execute("SELECT DISTINCT aggregate_kind FROM events ORDER BY 1").fetchall()
    return [str(k) for (k,) in found]


def commitments(con: duckdb.DuckDBPyConnection, status: str, limit: int) -> dict[str, Any]:
    """Commitment episodes with `status` (open: oldest first; closed: latest closed first), at
    most `limit`, with who opened them and what closed them: a turn (its number) when the
    change came from a reply's control line, else a direct command; and how many there are."""
    if status not in ("open", "closed"):
        raise InvalidInputError("status must be open or closed")
    order = "c.opened_position" if status == "open" else "c.closed_position DESC"
    found = rows(
        con.execute(
            "SELECT c.cid, c.text, c.status, c.origin, c.episode, c.opened_at, c.closed_at, "
            "c.close_reason, c.thread, c.concepts, c.evidence, c.opened_position, "
            "c.closed_position, o.seq AS opened_in_turn, s.seq AS closed_in_turn "
            "FROM (SELECT * FROM commitments c WHERE status = ? "
            f"ORDER BY {order} LIMIT ?) c "
            "LEFT JOIN turns o ON c.opened_position BETWEEN o.started_position "
            "AND o.finished_position "
            "LEFT JOIN turns s ON c.closed_position BETWEEN s.started_position "
            f"AND s.finished_position ORDER BY {order}",
            [status, limit],
        )
    )
    for row in found:
        closed = row["closed_position"]
        row["closed_by"] = (
            None if closed is None else ("turn" if row["closed_in_turn"] else "command")
        )
    counts = dict(con.execute("SELECT status, count(*) FROM commitments GROUP BY 1").fetchall())
    return {"rows": found, "open": counts.get("open", 0), "closed": counts.get("closed", 0)}


def tension_curves(
    con: duckdb.DuckDBPyConnection, streams: list[str], now: datetime, points: int = CURVE_POINTS
) -> dict[str, list[tuple[str, float]]]:
    """Each thread's tension at `points` evenly spaced times from its opening to `now` (or its
    resolution), by the closed-form law with the settings in effect at each time."""
    if not streams:
        return {}
    spans = con.execute(
        "SELECT stream_id, epoch(opened_at), epoch(resolved_at) FROM threads "
        "WHERE stream_id IN (SELECT unnest(?))",
        [streams],
    ).fetchall()
    gaps = thread_queries.liveness_gaps(con, now)
    credits = thread_queries.credit_times(con, now)
    settings = _settings_over_time(con, now)
    curves: dict[str, list[tuple[str, float]]] = {}
    for stream, opened, resolved in spans:
        end = min(now.timestamp(), resolved) if resolved is not None else now.timestamp()
        step = max(end - opened, 0.0) / max(points - 1, 1)
        curve = []
        for n in range(points):
            t = opened + step * n
            value, _ = tension_at(opened, credits.get(stream, ()), t, gaps, resolved, settings(t))
            curve.append((datetime.fromtimestamp(t, UTC).isoformat(), round(value, 4)))
        curves[stream] = curve
    return curves


def _settings_over_time(
    con: duckdb.DuckDBPyConnection, now: datetime
) -> Callable[[float], TensionParams]:
    """The law's parameters in effect at any time up to `now` (as `settings_as_of` gives them,
    from one read of the recorded changes instead of one per point)."""
    changes = con.execute(
        "SELECT epoch(time), key, value FROM config_changes WHERE time <= ? ORDER BY position",
        [now],
    ).fetchall()
    times = [float(t) for t, _, _ in changes]

    @functools.cache
    def upto(count: int) -> TensionParams:
        return thread_params({key: value for _, key, value in changes[:count]})

    return lambda t: upto(bisect.bisect_right(times, t))


def threads(
    con: duckdb.DuckDBPyConnection, now: datetime, include_resolved: bool, limit: int
) -> dict[str, Any]:
    """The `limit` tensest threads (`mind threads` rows, highest first) and how many there are:
    every thread's tension is computed (cheap), the details only for those shown."""
    params = thread_queries.settings_as_of(con, now)
    if include_resolved:
        ranked = thread_queries.ranked(con, now, True, params)
        return {"threads": thread_queries.details(con, ranked[:limit]), "total": len(ranked)}
    # Live threads only: the turn's own shortcut to the k tensest (no tension for every thread).
    top, _, live = thread_queries.extremes(con, now, params, ANY_POSITION, limit)
    return {"threads": thread_queries.details(con, top), "total": live}


def concepts(con: duckdb.DuckDBPyConnection, limit: int, edges: int) -> dict[str, Any]:
    """The first `limit` concepts by name as `mind concepts` shows them, how many there are,
    and up to `edges` relations (oldest first) for the graph."""
    found = rows(
        con.execute(
            "SELECT c.token, c.definition, c.version, c.aliases, c.defined_at, c.updated_at, "
            "coalesce(list({'relation': r.relation, 'target': r.target} ORDER BY r.position) "
            "FILTER (WHERE r.position IS NOT NULL), []) AS relations "
            "FROM (SELECT * FROM concepts ORDER BY token LIMIT ?) c "
            "LEFT JOIN concept_relations r ON r.source = c.token GROUP BY ALL ORDER BY c.token",
            [limit],
        )
    )
    relations = rows(
        con.execute(
            "SELECT source, relation, target FROM concept_relations ORDER BY position LIMIT ?",
            [edges],
        )
    )
    ((total,),) = con.execute("SELECT count(*) FROM concepts").fetchall()
    return {"concepts": found, "total": int(total), "relations": relations}


def concept_events(con: duckdb.DuckDBPyConnection, token: str) -> list[dict[str, Any]]:
    """Every event of one concept (by any of its names), oldest first (sealed)."""
    found = con.execute(
        "SELECT stream_id FROM concept_names WHERE name_key = lower(?) LIMIT 1", [token]
    ).fetchall()
    if not found:
        raise InvalidInputError(f"there is no concept {token!r}")
    return rows(
        con.execute(
            "SELECT position, time, type, aggregate_id AS aggregate, version, payload "
            "FROM events WHERE aggregate_id = ? ORDER BY position",
            [str(found[0][0])],
        )
    )


def knowledge_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The knowledge read models present in this file (an older read model may have none)."""
    found = con.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_name LIKE 'knowledge%' ORDER BY 1"
    ).fetchall()
    return [str(name) for (name,) in found]


def knowledge(con: duckdb.DuckDBPyConnection, limit: int = 200) -> dict[str, Any]:
    """The rows of each knowledge table (newest first where there is a position)."""
    out: dict[str, Any] = {}
    for table in knowledge_tables(con):
        columns = [
            c
            for (c,) in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                "ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]
        order = next(
            (c for c in ("position", "updated_at", "opened_position") if c in columns), None
        )
        by = f"ORDER BY {order} DESC" if order else ""
        out[table] = {
            "columns": columns,
            "rows": rows(con.execute(f'SELECT * FROM "{table}" {by} LIMIT ?', [limit])),
        }
    return out
