"""Handlers for threads, autonomy ticks and per-mind settings."""

from __future__ import annotations

from mindledger.projections.engine.handlers import Ev, Handler, Rows, index, registrar

HANDLERS: dict[str, Handler] = {}
handles = registrar(HANDLERS)


@handles("mind.thread.opened")
def thread_opened(rows: Rows, e: Ev) -> None:
    s, stream, at = e.state, e.stream, e.time
    # Every column at once (a new row replaces any there: each column is set), as
    # `commitment_opened`'s: `entity` and `update`'s keyword dict were a third of the handler.
    rows.entities.setdefault("threads", {})[stream] = {
        "stream_id": stream,
        "id": "t" + stream[:8],
        "label": s["label"],
        "content": s["content"],
        "status": "open",
        "origin": s["origin"],
        "opened_at": at,
        "updated_at": at,
        "resolved_at": None,
        "verdict": None,
        "reason": None,
        "artifact": None,
        "superseded_by": None,
        "mentions": 0,
        "work_count": 0,
        "last_work_at": None,
        "tension": None,
        "tension_as_of": None,
        "opened_position": e.position,
        "mentions_since_work": 0,
        "claimed_origin": s.get("claimed_origin"),
    }
    index(rows, e, "thread", f"{s['label']} {s['content']}")


@handles("mind.thread.mentioned")
def thread_mentioned(rows: Rows, e: Ev) -> None:
    row = rows.entity("threads", e.stream)
    row["mentions"] = (row.get("mentions") or 0) + 1
    row["mentions_since_work"] = (row.get("mentions_since_work") or 0) + 1
    row["updated_at"] = e.time
    if row["status"] == "open":
        row["status"] = "mentioned"


@handles("mind.thread.worked")
def thread_worked(rows: Rows, e: Ev) -> None:
    row = rows.entity("threads", e.stream)
    row.update(
        # Work recorded after a forgotten opening (its own words are none) keeps it forgotten.
        status="forgotten" if row.get("status") == "forgotten" else "worked",
        work_count=(row.get("work_count") or 0) + 1,
        last_work_at=e.time,
        updated_at=e.time,
        mentions_since_work=0,
    )
    rows.append(
        "thread_work",
        {
            "position": e.position,
            "stream_id": e.stream,
            "artifact": e.state["artifact"],
            "credit": e.state["credit"],
            "time": e.time,
        },
    )


@handles("mind.thread.resolved")
def thread_resolved(rows: Rows, e: Ev) -> None:
    s = e.state
    row = rows.entity("threads", e.stream)
    if row.get("status") not in (None, "resolved"):
        rows.superseded.append(row["opened_position"])
    row.update(
        status="resolved",
        verdict=s["verdict"],
        reason=s.get("reason"),
        artifact=s.get("artifact"),
        superseded_by=s.get("by"),
        resolved_at=e.time,
        updated_at=e.time,
    )


@handles("mind.identity.configured")
def configured(rows: Rows, e: Ev) -> None:
    row = rows.entity("identity", e.stream)
    row["updated_at"] = e.time
    rows.append(
        "config_changes",
        {"position": e.position, "key": e.state["key"], "value": e.state["value"], "time": e.time},
    )


@handles("mind.tick.decided")
def tick_decided(rows: Rows, e: Ev) -> None:
    s = e.state
    rows.entity("ticks", e.stream).update(
        time=e.time,
        fired=s["fired"],
        reason=s["reason"],
        max_tension=s["max_tension"],
        top_thread=s["top_thread"],
        live_threads=s["live_threads"],
        cycle=s["cycle"],
        turn_id=None,
        status="decided" if s["fired"] else "suppressed",
        note=None,
        decided_position=e.position,
    )


@handles("mind.tick.finished")
def tick_finished(rows: Rows, e: Ev) -> None:
    s = e.state
    rows.entity("ticks", e.stream).update(turn_id=s["turn_id"], status=s["status"], note=s["note"])
