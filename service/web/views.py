"""What the web page shows that the /v1 API does not: a turn's context items with their text and
what its control lines did, the event timeline with filters, the commitments with who opened and
closed them, each thread's tension over time, a concept's versions and the knowledge tables.

Reads only the read models (one DuckDB connection given by the caller); listings and the tension
law come from projections/queries and domain/tension, never rewritten here. Event payloads come
sealed from the read model: `opened` (service/web/opening.py) opens those a view shows.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import duckdb

from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.settings import thread_params
from mindledger.domain.tension import TensionParams, tension_at
from mindledger.projections.queries import thread_queries
from mindledger.projections.queries.thread_queries import credit_times, liveness_gaps
from mindledger.service.web.opening import Opener

# The payload field that holds an event's words, by preference (what a context item quotes).
TEXT_FIELDS = ("text", "definition", "content", "reply", "label", "name", "alias", "line")
EVENT_LIMIT = 500
MEMORY_ITEM = re.compile(r"#(\d+) (.*)")
CURVE_POINTS = 48
ANY_POSITION = 2**62
SEARCH_BATCH = 1000  # events opened per step of a word search (sealed text is searched opened)


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
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


def _open_payloads(rows: list[dict[str, Any]], opened: Opener, keep: tuple[str, ...]) -> None:
    """Each row's `payload` opened in place; the columns only the opening needed dropped
    (all but `keep` of type, aggregate and version)."""
    for row, payload in zip(rows, opened(rows) if rows else [], strict=True):
        row["payload"] = payload
        for column in ("type", "aggregate", "version"):
            if column not in keep:
                row.pop(column)


def turns(con: duckdb.DuckDBPyConnection, limit: int, before: int | None) -> list[dict[str, Any]]:
    """The latest turns (newest last) with the message, reply and outcome, for the chat view."""
    where, args = ("WHERE started_position < ?", [before]) if before else ("", [])
    rows = _rows(
        con.execute(
            "SELECT stream_id AS turn, seq, speaker, status, text, reply, model, failure_kind, "
            "failure, started_at, finished_at, started_position, finished_position, cut_off "
            f"FROM turns {where} ORDER BY started_position DESC LIMIT ?",
            [*args, limit],
        )
    )
    for row in rows:
        row["turn"] = row["turn"].replace("-", "")
    return rows[::-1]


def turn_detail(con: duckdb.DuckDBPyConnection, turn: str, opened: Opener) -> dict[str, Any]:
    """One turn: its context items in rank order with their text (from the ledger event each
    came from), the events its reply caused, its claims and every rejected line with why."""
    key = turn.replace("-", "").lower()
    found = _rows(
        con.execute(
            "SELECT stream_id, seq, status, text, reply, reply_raw, model, usage, latency_ms, "
            "finish_reason, cut_off, failure_kind, failure, started_at, finished_at, "
            "started_position, finished_position, context, context_tokens, opened, closed, "
            "rejections FROM turns WHERE replace(stream_id, '-', '') = ?",
            [key],
        )
    )
    if not found:
        raise InvalidInputError(f"there is no turn {turn}")
    row = found[0]
    stream = row.pop("stream_id")
    items = _json(row.pop("context")) or []
    texts = _texts(con, [i["id"] for i in items if i.get("id")], opened)
    shown = _memory_lines(con, row["started_position"], row["finished_position"], opened)
    notices = iter(shown.get(0, []))
    row["context"] = [
        {"rank": n, **item, "text": _item_text(item.get("id"), shown, notices, texts)}
        for n, item in enumerate(items, 1)
    ]
    row["usage"] = _json(row["usage"])
    row["rejections"] = _json(row["rejections"]) or []
    row["turn"] = key
    row["claims"] = _rows(
        con.execute(
            "SELECT position, claim_type, payload FROM claims WHERE turn_id = ? ORDER BY position",
            [stream],
        )
    )
    for claim in row["claims"]:
        claim["payload"] = _json(claim["payload"])
    last = row["finished_position"] or row["started_position"]
    row["effects"] = _rows(
        con.execute(
            "SELECT position, type, aggregate_id AS aggregate, version, payload FROM events "
            "WHERE position > ? AND position <= ? AND aggregate_kind NOT IN ('turn', "
            "'turn_numbers') ORDER BY position",
            [row["started_position"], last],
        )
    )
    _open_payloads(row["effects"], opened, ("type", "aggregate"))
    return row


def _item_text(
    item: int | None, shown: dict[int, list[str]], notices: Any, texts: dict[int, str | None]
) -> str | None:
    """The item as the model read it in the memory block, else its event's text."""
    if item == 0:
        return next(notices, None)
    lines = shown.get(item or -1)
    return lines[0] if lines else texts.get(item or -1)


def _memory_lines(
    con: duckdb.DuckDBPyConnection, first: int, last: int | None, opened: Opener
) -> dict[int, list[str]]:
    """The memory block of the prompt the turn recorded as sent: item number -> its line
    (0: the lines without a number, the rules, in order)."""
    found = _rows(
        con.execute(
            "SELECT type, aggregate_id AS aggregate, version, payload FROM events "
            "WHERE position > ? AND position <= ? "
            "AND type IN ('mind.turn.replied', 'mind.turn.generation_failed') LIMIT 1",
            [first, last or first],
        )
    )
    _open_payloads(found, opened, ())
    prompt = found[0]["payload"].get("prompt") or [] if found else []
    system = next((m.get("content", "") for m in prompt if m.get("role") == "system"), "")
    block = system.partition("<memory>")[2].partition("</memory>")[0]
    out: dict[int, list[str]] = {}
    for line in block.splitlines():  # the preamble and day headings match neither
        numbered = MEMORY_ITEM.match(line)
        if numbered:
            out.setdefault(int(numbered[1]), []).append(numbered[2])
        elif line.startswith("["):
            out.setdefault(0, []).append(line)
    return out


def _texts(
    con: duckdb.DuckDBPyConnection, positions: list[int], opened: Opener
) -> dict[int, str | None]:
    if not positions:
        return {}
    rows = _rows(
        con.execute(
            "SELECT position, type, aggregate_id AS aggregate, version, payload FROM events "
            "WHERE position IN (SELECT unnest(?))",
            [positions],
        )
    )
    _open_payloads(rows, opened, ())
    out: dict[int, str | None] = {}
    for row in rows:
        data = row["payload"]
        out[row["position"]] = next((str(data[f]) for f in TEXT_FIELDS if data.get(f)), None)
    return out


def events(
    con: duckdb.DuckDBPyConnection,
    opened: Opener,
    *,
    kind: str | None = None,
    aggregate: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    search: str | None = None,
    before: int | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """Events newest first, filtered by aggregate kind, aggregate id (a prefix), time and a
    case-insensitive search of the type and the opened payload; `before`: the next page's end."""
    if not 1 <= limit <= EVENT_LIMIT:
        raise InvalidInputError(f"limit must be 1 to {EVENT_LIMIT}")
    clauses, args = ["TRUE"], []
    filters: list[tuple[str, Any]] = [
        ("aggregate_kind = ?", kind),
        ("replace(aggregate_id, '-', '') LIKE ?", aggregate and aggregate.replace("-", "") + "%"),
        ("time >= ?", since),
        ("time <= ?", until),
    ]
    for clause, value in filters:
        if value:
            clauses.append(clause)
            args.append(value)
    end = ANY_POSITION if before is None else before
    if search:
        rows = _searched(con, " AND ".join(clauses), args, end, search, limit, opened)
    else:
        rows = _events_before(con, " AND ".join(clauses), args, end, limit)
        _open_payloads(rows, opened, ("type", "aggregate", "version"))
    kinds = [
        str(k)
        for (k,) in con.execute("SELECT DISTINCT aggregate_kind FROM events ORDER BY 1").fetchall()
    ]
    more = len(rows) == limit and rows[-1]["position"] > 1
    return {"events": rows, "kinds": kinds, "next_before": rows[-1]["position"] if more else None}


def _events_before(
    con: duckdb.DuckDBPyConnection, where: str, args: list[Any], end: int, limit: int
) -> list[dict[str, Any]]:
    return _rows(
        con.execute(
            "SELECT position, time, type, aggregate_id AS aggregate, aggregate_kind AS kind, "
            f"version, hash, payload FROM events WHERE {where} AND position < ? "
            "ORDER BY position DESC LIMIT ?",
            [*args, end, limit],
        )
    )


def _searched(
    con: duckdb.DuckDBPyConnection,
    where: str,
    args: list[Any],
    end: int,
    search: str,
    limit: int,
    opened: Opener,
) -> list[dict[str, Any]]:
    """The newest `limit` events before `end` whose type or opened payload (its canonical JSON)
    holds `search`, any case. SQL cannot search sealed text: the events are opened a batch at
    a time, newest first, until `limit` match or none are left."""
    needle, found = search.casefold(), list[dict[str, Any]]()
    while len(found) < limit:
        batch = _events_before(con, where, args, end, SEARCH_BATCH)
        _open_payloads(batch, opened, ("type", "aggregate", "version"))
        for row in batch:
            text = f"{row['type']}\n{canonical_json(row['payload']).decode()}"
            if needle in text.casefold() and len(found) < limit:
                found.append(row)
        if len(batch) < SEARCH_BATCH:
            break
        end = batch[-1]["position"]
    return found


def commitments(con: duckdb.DuckDBPyConnection, status: str, limit: int) -> dict[str, Any]:
    """Commitment episodes with `status` (open: oldest first; closed: latest closed first), at
    most `limit`, with who opened them and what closed them: a turn (its number) when the
    change came from a reply's control line, else a direct command; and how many there are."""
    if status not in ("open", "closed"):
        raise InvalidInputError("status must be open or closed")
    order = "c.opened_position" if status == "open" else "c.closed_position DESC"
    rows = _rows(
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
    for row in rows:
        closed = row["closed_position"]
        row["closed_by"] = (
            None if closed is None else ("turn" if row["closed_in_turn"] else "command")
        )
    counts = dict(con.execute("SELECT status, count(*) FROM commitments GROUP BY 1").fetchall())
    return {"rows": rows, "open": counts.get("open", 0), "closed": counts.get("closed", 0)}


def tension_curves(
    con: duckdb.DuckDBPyConnection, streams: list[str], now: datetime, points: int = CURVE_POINTS
) -> dict[str, list[tuple[str, float]]]:
    """Each thread's tension at `points` evenly spaced times from its opening to `now` (or its
    resolution), by the closed-form law with the settings in effect at each time."""
    if not streams:
        return {}
    rows = con.execute(
        "SELECT stream_id, epoch(opened_at), epoch(resolved_at) FROM threads "
        "WHERE stream_id IN (SELECT unnest(?))",
        [streams],
    ).fetchall()
    gaps, credits = liveness_gaps(con, now), credit_times(con, now)
    settings = _settings_over_time(con, now)
    curves: dict[str, list[tuple[str, float]]] = {}
    for stream, opened, resolved in rows:
        end = min(now.timestamp(), resolved) if resolved is not None else now.timestamp()
        step = max(end - opened, 0.0) / max(points - 1, 1)
        curve = []
        for n in range(points):
            t = opened + step * n
            params = settings(t)
            value, _ = tension_at(opened, credits.get(stream, ()), t, gaps, resolved, params)
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
    rows = _rows(
        con.execute(
            "SELECT c.token, c.definition, c.version, c.aliases, c.defined_at, c.updated_at, "
            "coalesce(list({'relation': r.relation, 'target': r.target} ORDER BY r.position) "
            "FILTER (WHERE r.position IS NOT NULL), []) AS relations "
            "FROM (SELECT * FROM concepts ORDER BY token LIMIT ?) c "
            "LEFT JOIN concept_relations r ON r.source = c.token GROUP BY ALL ORDER BY c.token",
            [limit],
        )
    )
    relations = _rows(
        con.execute(
            "SELECT source, relation, target FROM concept_relations ORDER BY position LIMIT ?",
            [edges],
        )
    )
    ((total,),) = con.execute("SELECT count(*) FROM concepts").fetchall()
    return {"concepts": rows, "total": int(total), "relations": relations}


def concept_versions(
    con: duckdb.DuckDBPyConnection, token: str, opened: Opener
) -> list[dict[str, Any]]:
    """Every recorded change to one concept (definitions, aliases, relations, bindings)."""
    found = con.execute(
        "SELECT stream_id FROM concept_names WHERE name_key = lower(?) LIMIT 1", [token]
    ).fetchall()
    if not found:
        raise InvalidInputError(f"there is no concept {token!r}")
    rows = _rows(
        con.execute(
            "SELECT position, time, type, aggregate_id AS aggregate, version, payload "
            "FROM events WHERE aggregate_id = ? ORDER BY position",
            [str(found[0][0])],
        )
    )
    _open_payloads(rows, opened, ("type",))
    return rows


def knowledge_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The knowledge read models present in this file (an older read model may have none)."""
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_name LIKE 'knowledge%' ORDER BY 1"
    ).fetchall()
    return [str(name) for (name,) in rows]


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
        rows = _rows(con.execute(f'SELECT * FROM "{table}" {by} LIMIT ?', [limit]))
        out[table] = {"columns": columns, "rows": rows}
    return out
