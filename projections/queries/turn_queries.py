"""Turns by reference: the latest one, or those whose id starts with a prefix."""

from __future__ import annotations

from typing import Any


def latest_turn(con: Any) -> str | None:
    """The stream id of the turn started last (None before the first turn)."""
    found = con.execute(
        "SELECT stream_id FROM turns ORDER BY started_position DESC LIMIT 1"
    ).fetchall()
    return str(found[0][0]) if found else None


def turns_with_prefix(con: Any, prefix: str, limit: int = 2) -> list[str]:
    """The stream ids (at most `limit`) of turns whose id, without dashes, starts with
    `prefix` (lower-case hex digits only: the caller checks)."""
    found = con.execute(
        "SELECT stream_id FROM turns WHERE replace(stream_id, '-', '') LIKE ? LIMIT ?",
        [prefix + "%", limit],
    ).fetchall()
    return [str(row[0]) for row in found]
