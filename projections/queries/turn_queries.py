"""Turns by reference (mindledger/turn_refs.py holds the rule): the latest one, those with a
number, or those whose id starts with a prefix."""

from __future__ import annotations

from typing import Any


def latest_turn(con: Any) -> str | None:
    """The stream id of the turn started last (None before the first turn)."""
    found = con.execute(
        "SELECT stream_id FROM turns ORDER BY started_position DESC LIMIT 1"
    ).fetchall()
    return str(found[0][0]) if found else None


def numbered_turns(con: Any, number: int) -> list[tuple[str, int]]:
    """(stream id, number) of the turns numbered `number` (one, unless imports repeat it)."""
    found = con.execute(
        "SELECT stream_id, seq FROM turns WHERE seq = ? ORDER BY started_position", [number]
    ).fetchall()
    return [(str(s), int(n)) for s, n in found]


def turns_with_prefix(con: Any, prefix: str, limit: int = 2) -> list[tuple[str, int]]:
    """(stream id, number) of at most `limit` turns whose id, without dashes, starts with
    `prefix` (lower-case hex digits only: the caller checks), oldest first."""
    found = con.execute(
        "SELECT stream_id, seq FROM turns WHERE starts_with(replace(stream_id, '-', ''), ?) "
        "ORDER BY started_position LIMIT ?",
        [prefix, limit],
    ).fetchall()
    return [(str(s), int(n)) for s, n in found]
