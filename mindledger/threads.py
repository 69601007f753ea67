"""Threads: open and resolve one (the owner's direct commands), a short id resolved, the listing
by tension, the discriminator metrics."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from mindledger.compose import (
    Home,
    clock_from_env,
    open_mind,
    read_model,
)
from mindledger.domain.errors import UnknownThreadError
from mindledger.rules import AsOf


def resolve_thread_id(home: Home, given: str) -> UUID:
    """Turn a short id (`t1a2b3c4d`), a prefix or a full id into the thread's stream id."""
    from mindledger.projections.queries import thread_queries

    with read_model(home) as con:
        matches = thread_queries.find_threads(con, given)
    if len(matches) != 1:
        raise UnknownThreadError(
            f"no thread has id {given!r}; `mind threads --all` lists them"
            if not matches
            else f"{given!r} matches {len(matches)} threads; give more digits"
        )
    return UUID(matches[0].stream_id)


def _when(con: Any, as_of: AsOf | None) -> Any:
    from mindledger.projections.queries.listings import ledger_point

    when = clock_from_env()()
    if as_of is not None:
        when = ledger_point(con, as_of.position, as_of.time)[1] or when
    return when


def thread_listing(
    home: Home, include_resolved: bool = False, as_of: AsOf | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The threads by tension (what `mind threads --json` prints) and the triage demand."""
    from mindledger.projections.queries import thread_queries

    with read_model(home) as con:
        when = _when(con, as_of)
        params = thread_queries.settings_as_of(con, when)
        rows = thread_queries.threads_by_tension(con, when, include_resolved, params)
    live = [r for r in rows if r["status"] not in ("resolved", "forgotten")]
    return rows, thread_queries.triage(live, params)


def thread_metrics(home: Home, as_of: AsOf | None = None) -> dict[str, Any]:
    """What `mind threads --metrics --json` prints."""
    from mindledger.projections.queries import thread_queries

    with read_model(home) as con:
        figures: dict[str, Any] = thread_queries.metrics(con, _when(con, as_of))
    return figures


def open_thread(home: Home, label: str, content: str) -> dict[str, Any]:
    """Open a thread (what `mind thread open --json` prints: its ids and the triage demand,
    null unless more threads are live than the cap allows)."""
    from mindledger.domain.thread import short_id
    from mindledger.projections.queries import thread_queries

    app = open_mind(home)
    try:
        thread_id = app.open_thread(label, content)
    finally:
        app.close()
    now = clock_from_env()()
    with read_model(home) as con:
        params = thread_queries.settings_as_of(con, now)
        demand = thread_queries.triage(
            thread_queries.threads_by_tension(con, now, params=params), params
        )
    return {"id": short_id(thread_id), "stream_id": thread_id.hex, "triage": demand}


def resolve_thread(
    home: Home,
    thread: str,
    verdict: str,
    reason: str | None = None,
    artifact: str | None = None,
    by: str | None = None,
) -> dict[str, Any]:
    """Resolve `thread` (an id or prefix) with a verdict and what it requires (what `mind
    thread resolve --json` prints)."""
    from mindledger.domain.thread import short_id

    stream = resolve_thread_id(home, thread)
    app = open_mind(home)
    try:
        app.resolve_thread(stream, verdict, reason=reason, artifact=artifact, by=by)
    finally:
        app.close()
    return {"id": short_id(stream), "stream_id": stream.hex, "verdict": verdict}
