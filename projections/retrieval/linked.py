"""Items reached through links rather than words: the threads that open commitments serve, and
what the concepts named in a query are bound to (events, commitments, threads)."""

from __future__ import annotations

from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.queries.thread_queries import LIVE
from mindledger.projections.retrieval.item_text import Found, commitment_text, said, thread_text


def commitment_threads(con: duckdb.DuckDBPyConnection, limit: int) -> list[Found]:
    """Live threads that the newest open commitments serve (`mind commit --thread`)."""
    # Equality joins only: a join on `thread IN (id, stream_id)` is a nested loop, which took a
    # second per turn at 100k events (bench/turns.py).
    # The commitments first: most serve no thread, and then the threads are never scanned
    # (4.5 ms a turn at 143,000 threads).
    serving = con.execute(
        "SELECT cid, thread, opened_position FROM commitments WHERE status = 'open' "
        "AND thread IS NOT NULL AND opened_position <= $lim",
        {"lim": limit},
    ).fetchall()
    if not serving:
        return []
    rows = con.execute(
        "WITH c AS (SELECT unnest($c) AS cid, unnest($th) AS thread, unnest($p) AS opened), "
        f"t AS (SELECT * FROM threads WHERE {LIVE} AND opened_position <= $lim) "
        "SELECT t.opened_position, t.id, t.status, t.label, t.content, c.cid, c.opened "
        "FROM c JOIN t ON t.id = c.thread UNION ALL "
        "SELECT t.opened_position, t.id, t.status, t.label, t.content, c.cid, c.opened "
        "FROM c JOIN t ON t.stream_id = c.thread ORDER BY 7 DESC LIMIT 5",
        {
            "lim": limit,
            "c": [r[0] for r in serving],
            "th": [r[1] for r in serving],
            "p": [r[2] for r in serving],
        },
    ).fetchall()
    return [
        (pos, "thread", thread_text(tid, status, label, content), tid, f"served by {cid}")
        for pos, tid, status, label, content, cid, _ in rows
    ]


def bound_items(con: duckdb.DuckDBPyConnection, tokens: list[str], limit: int) -> list[Found]:
    """What the concepts `tokens` are bound to, newest binding first (at most 10)."""
    if not tokens:
        return []
    bindings = con.execute(
        "SELECT token, kind, target FROM concept_bindings WHERE token IN (SELECT unnest($t)) "
        "AND position <= $lim ORDER BY position DESC LIMIT 10",
        {"t": tokens, "lim": limit},
    ).fetchall()
    out: list[Found] = []
    for token, kind, target in bindings:
        out += _target(con, kind, target, limit, f"bound to {token}")
    return out


def _target(
    con: duckdb.DuckDBPyConnection, kind: str, target: str, limit: int, why: str
) -> list[Found]:
    found: list[Any]
    if kind == "event":
        found = con.execute(
            "SELECT position, speaker, time, text, source_id FROM messages "
            "WHERE position = TRY_CAST($t AS BIGINT) AND position <= $lim",
            {"t": target, "lim": limit},
        ).fetchall()
        return [said(p, sp, tm, tx, sid, why) for p, sp, tm, tx, sid in found]
    if kind == "commitment":
        found = con.execute(
            "SELECT opened_position, cid, text FROM commitments WHERE cid = lower($t) "
            "AND status = 'open' AND opened_position <= $lim",
            {"t": target, "lim": limit},
        ).fetchall()
        return [(p, "commitment", commitment_text(cid, tx), cid, why) for p, cid, tx in found]
    found = con.execute(
        "SELECT opened_position, id, status, label, content FROM threads "
        f"WHERE $t IN (id, stream_id) AND {LIVE} AND opened_position <= $lim",
        {"t": target, "lim": limit},
    ).fetchall()
    return [(p, "thread", thread_text(i, st, lb, ct), i, why) for p, i, st, lb, ct in found]
