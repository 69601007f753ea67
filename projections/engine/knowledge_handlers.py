"""Handlers for knowledge items and the routes asking took.

`knowledge` holds each item as it stands (a deleted one keeps only its id, hashes and revision:
its content leaves the read models), `knowledge_revisions` every change without content (the
ledger keeps that, for `mind knowledge show ID --history`), `knowledge_routes` every ask. An item
is in the lexical index while it may reach a context: not disputed, retracted or deleted. An item
whose words were forgotten is deleted with state `forgotten` and no content, its hash included
(it went with its key), until its question is captured again.
"""

from __future__ import annotations

import json
from typing import Any

from mindledger.domain.text import normalise_intent
from mindledger.projections.engine.handlers import Ev, Handler, Rows, forgotten, index, registrar

HANDLERS: dict[str, Handler] = {}
handles = registrar(HANDLERS)

UNREACHABLE = ("disputed", "retracted")
FORGOTTEN_STATE = "forgotten"


def _is_forgotten(e: Ev, row: dict[str, Any]) -> bool:
    """Whether this event's words, or the item's before it, were forgotten."""
    return forgotten(e) or row.get("state") == FORGOTTEN_STATE


def _forget(rows: Rows, row: dict[str, Any]) -> None:
    """The item as if never captured: listed (with --all) as forgotten, with no content."""
    _unindex(rows, row)
    row.update(
        intent_hash=None,
        question=None,
        intent=None,
        answer=None,
        concepts=[],
        provenance=None,
        content_hash=None,
        previous_hash=None,
        state=FORGOTTEN_STATE,
        deleted=True,
    )


def _unindex(rows: Rows, row: dict[str, Any]) -> None:
    if row.get("doc_position") is not None:
        rows.superseded.append(row["doc_position"])
        row["doc_position"] = None


def _reindex(rows: Rows, e: Ev, row: dict[str, Any]) -> None:
    """The item's current text in the lexical index, or out of it when it may not be shown."""
    _unindex(rows, row)
    if not row.get("deleted") and row.get("state") not in UNREACHABLE:
        index(rows, e, "knowledge", f"{row['question']} {row['answer']}")
        row["doc_position"] = e.position


def _revision(rows: Rows, e: Ev, row: dict[str, Any], change: str, role: str) -> None:
    rows.append(
        "knowledge_revisions",
        {
            "position": e.position,
            "stream_id": e.stream,
            "item_id": row["item_id"],
            "revision": row["revision"],
            "change": change,
            "role": role,
            "state": row["state"],
            "confidence_ppm": row["confidence_ppm"],
            "content_hash": row["content_hash"],
            "previous_hash": row.get("previous_hash"),
            "time": e.time,
        },
    )


@handles("mind.knowledge.captured")
def knowledge_captured(rows: Rows, e: Ev) -> None:
    s = e.state
    row = rows.entity("knowledge", e.stream)
    if row.get("created_at") is None:
        row.update(created_at=e.time, doc_position=None)
    row.update(
        item_id=s["item_id"],
        intent_hash=s["intent_hash"],
        question=s["question"],
        intent=normalise_intent(s["question"]),
        answer=s["answer"],
        concepts=s.get("concepts", []),
        state=s["state"],
        confidence_ppm=s["confidence_ppm"],
        freshness=s["freshness"],
        max_age_days=s["max_age_days"],
        reuse=s["reuse"],
        provenance=json.dumps(s["provenance"]),
        captured_by=s["role"],
        revision=s["revision"],
        content_hash=s["content_hash"],
        previous_hash=s.get("previous_hash"),
        deleted=False,
        updated_at=e.time,
        validated_at=e.time,
        turn_id=s.get("turn_id"),
    )
    if forgotten(e):
        _forget(rows, row)
    else:
        _reindex(rows, e, row)
    _revision(rows, e, row, "captured", s["role"])


@handles("mind.knowledge.edited")
def knowledge_edited(rows: Rows, e: Ev) -> None:
    s = e.state
    row = rows.entity("knowledge", e.stream)
    row.update(
        answer=s["answer"],
        revision=s["revision"],
        content_hash=s["content_hash"],
        previous_hash=s["previous_hash"],
        updated_at=e.time,
    )
    if _is_forgotten(e, row):
        _forget(rows, row)
    else:
        _reindex(rows, e, row)
    _revision(rows, e, row, "edited", s["role"])


@handles("mind.knowledge.judged")
def knowledge_judged(rows: Rows, e: Ev) -> None:
    s = e.state
    row = rows.entity("knowledge", e.stream)
    if row.get("state") == FORGOTTEN_STATE:
        _revision(rows, e, row, s["judgement"], s["role"])
        return
    reachable = row.get("state") not in UNREACHABLE
    row.update(
        state=s["state"],
        confidence_ppm=s["confidence_ppm"],
        updated_at=e.time,
        validated_at=e.time,
    )
    if reachable != (s["state"] not in UNREACHABLE):
        _reindex(rows, e, row)
    _revision(rows, e, row, s["judgement"], s["role"])


@handles("mind.knowledge.deleted")
def knowledge_deleted(rows: Rows, e: Ev) -> None:
    s = e.state
    row = rows.entity("knowledge", e.stream)
    _unindex(rows, row)
    row.update(
        question=None,
        intent=None,
        answer=None,
        concepts=[],
        provenance=None,
        revision=s["revision"],
        content_hash=s["content_hash"],
        previous_hash=s["previous_hash"],
        deleted=True,
        updated_at=e.time,
    )
    if _is_forgotten(e, row):
        _forget(rows, row)
    _revision(rows, e, row, "deleted", s["role"])


@handles("mind.ask.routed")
def ask_routed(rows: Rows, e: Ev) -> None:
    s = e.state
    gone = forgotten(e)  # its question went with the item it was routed to, or its turn
    rows.append(
        "knowledge_routes",
        {
            "position": e.position,
            "time": e.time,
            "question": None if gone else s["question"],
            "intent_hash": None if gone else s["intent_hash"],
            "route": s["route"],
            "decision": s["decision"],
            "reasons": s["reasons"],
            "score": s.get("score"),
            "item_id": s.get("item_id"),
            "turn_id": s.get("turn_id"),
            "current": s.get("current", False),
            "via": s.get("via", "ask"),
            "semantic": s["semantic"],
            "candidates": json.dumps([] if gone else s.get("candidates", [])),
        },
    )
