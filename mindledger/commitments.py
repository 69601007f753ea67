"""Commitments: open one (the same open text is a no-op that says so), close one, list them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindledger.compose import Home, open_mind, read_model
from mindledger.domain.commitment import ORIGINS
from mindledger.domain.errors import InvalidInputError


def commit(
    home: Home,
    text: str,
    origin: str = "owner",
    thread: str | None = None,
    concepts: Sequence[str] = (),
) -> dict[str, Any]:
    """Open a commitment (what `mind commit --json` prints): `thread` a thread's id or prefix,
    `concepts` tokens it is about (unknown ones are refused before anything is written)."""
    from mindledger.domain.thread import short_id
    from mindledger.threads import resolve_thread_id

    if origin not in ORIGINS:
        raise InvalidInputError(f"origin {origin!r} is not one of {', '.join(ORIGINS)}")
    thread_id = short_id(resolve_thread_id(home, thread)) if thread else None
    app = open_mind(home)
    try:
        for token in concepts:
            app.concept(token)
        outcome = app.open_commitment(
            text,
            origin=origin,  # type: ignore[arg-type]  # checked against ORIGINS above
            thread_id=thread_id,
            concepts=tuple(concepts),
        )
    finally:
        app.close()
    return {"cid": outcome.cid, "episode": outcome.episode, "opened": outcome.opened}


def close(home: Home, cid: str, reason: str | None = None) -> dict[str, Any]:
    """Close the open commitment `cid` (what `mind close --json` prints)."""
    app = open_mind(home)
    try:
        commitment = app.close_commitment(cid, reason)
    finally:
        app.close()
    return {
        "cid": commitment.cid,
        "episode": commitment.episode,
        "text": commitment.text,
        "closed": True,
        "reason": reason,
    }


def commitment_listing(home: Home, include_closed: bool = False) -> list[dict[str, Any]]:
    """Open commitments, or all with `include_closed` (what `mind commitments --json` prints)."""
    from mindledger.projections.queries import listings

    with read_model(home) as con:
        rows: list[dict[str, Any]] = listings.commitments(con, include_closed)
    return rows
