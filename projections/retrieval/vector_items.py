"""What the vector projection embeds, read from a read model: every message (its stored text,
as recall's vector channel compares it) and every knowledge item's question (as the knowledge
channel compares it), by ledger position. A forgotten message has no row and a forgotten or
deleted item no question, so neither is ever embedded, and `in_the_clear` says which vectors a
forget keeps. Windows of consecutive messages (`turn_windows`) are cut from `window_rows`, the
same messages."""

from __future__ import annotations

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

ITEMS = (
    "SELECT position, 'message' AS kind, text FROM messages "
    "WHERE position > $after AND position <= $upto AND text IS NOT NULL "
    "UNION ALL SELECT doc_position, 'knowledge', question FROM knowledge "
    "WHERE doc_position > $after AND doc_position <= $upto AND NOT deleted "
    "AND question IS NOT NULL"
)


def tracked_position(con: duckdb.DuckDBPyConnection) -> int:
    """The ledger position the read model includes."""
    row = con.execute("SELECT max(position) FROM tracking").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def items_after(
    con: duckdb.DuckDBPyConnection, after: int, upto: int, limit: int
) -> list[tuple[int, str, str]]:
    """Up to `limit` items (position, kind, text) after `after` and up to `upto`, in order."""
    rows = con.execute(
        f"SELECT * FROM ({ITEMS}) ORDER BY position LIMIT {int(limit)}",
        {"after": after, "upto": upto},
    ).fetchall()
    return [(int(p), str(k), str(t)) for p, k, t in rows]


def in_the_clear(con: duckdb.DuckDBPyConnection) -> list[int]:
    """The positions of every item a vector may be kept for (a forget keeps only these)."""
    rows = con.execute(f"SELECT position FROM ({ITEMS})", {"after": -1, "upto": 2**62}).fetchall()
    return [int(p) for (p,) in rows]


def window_rows(
    con: duckdb.DuckDBPyConnection, start: int, upto: int
) -> list[tuple[int, str | None, object, str, str | None, str]]:
    """The messages from `start` to `upto` as `turn_windows.cut` reads them (position,
    speaker, time, text, source id, conversation), in order, the forgotten left out."""
    rows = con.execute(
        "SELECT position, speaker, time, text, source_id, coalesce(conversation, '') "
        "FROM messages WHERE position >= ? AND position <= ? AND text IS NOT NULL "
        "ORDER BY position",
        [start, upto],
    ).fetchall()
    return [tuple(r) for r in rows]
