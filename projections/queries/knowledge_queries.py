"""Knowledge over the read models: listings, and which item or turn a target names."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

# An item whose words were forgotten is listed (with --all) but names nothing: it is as if it
# had never been captured (projections/engine/knowledge_handlers.py).
NAMEABLE = "state IS DISTINCT FROM 'forgotten'"
LISTED = (
    "item_id, state, confidence_ppm, freshness, reuse, revision, captured_by, question, answer, "
    "concepts, deleted, updated_at, intent_hash"
)


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    for row in rows:
        for key, value in row.items():
            if hasattr(value, "isoformat"):
                row[key] = value.isoformat()
        if isinstance(row.get("provenance"), str):
            row["provenance"] = json.loads(row["provenance"])
    return rows


def knowledge_items(con: duckdb.DuckDBPyConnection, include_deleted: bool) -> list[dict[str, Any]]:
    """Items, oldest first (deleted ones, without content, with `include_deleted`)."""
    where = "" if include_deleted else "WHERE NOT deleted"
    return _dicts(
        con.execute(f"SELECT {LISTED} FROM knowledge {where} ORDER BY created_at, item_id")
    )


def knowledge_row(con: duckdb.DuckDBPyConnection, hash_: str) -> dict[str, Any] | None:
    """One item's row with its provenance."""
    found = _dicts(
        con.execute(f"SELECT {LISTED}, provenance FROM knowledge WHERE intent_hash = ?", [hash_])
    )
    return found[0] if found else None


def matching_items(
    con: duckdb.DuckDBPyConnection, target: str, asked: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The items a target names: by id (or a prefix of it, 3 characters at least), or by
    asking the same question: `asked` holds the intent hash of the item the mind finds for the
    target as a question (keyed with the mind's secret, which a reader does not hold). A
    forgotten item is never named."""
    given = target.strip().lower()
    by_id = (
        _dicts(
            con.execute(
                "SELECT item_id, intent_hash, question, deleted FROM knowledge "
                f"WHERE starts_with(item_id, ?) AND {NAMEABLE} ORDER BY item_id",
                [given],
            )
        )
        if len(given) >= 3
        else []
    )
    by_question = (
        _dicts(
            con.execute(
                "SELECT item_id, intent_hash, question, deleted FROM knowledge "
                f"WHERE intent_hash IN (SELECT unnest(?)) AND {NAMEABLE} ORDER BY item_id",
                [list(asked)],
            )
        )
        if asked
        else []
    )
    seen = {r["item_id"] for r in by_id}
    return by_id + [r for r in by_question if r["item_id"] not in seen]
