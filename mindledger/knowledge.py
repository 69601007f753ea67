"""The knowledge use cases: remember, judge, edit, delete, decide a turn's answer, list, show,
ask (every front-end's; ids resolved here once)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from mindledger.compose import (
    Home,
    open_mind,
    read_model,
)
from mindledger.domain.knowledge import Judgement, Knowledge

T = TypeVar("T")


def item_json(item: Knowledge | None) -> dict[str, Any] | None:
    """An item as `--json` shows it."""
    if item is None or not item.version:
        return None
    return {
        "id": item.item_id,
        "question": None if item.deleted else item.question,
        "answer": None if item.deleted else item.answer,
        "state": item.state,
        "confidence": item.confidence_ppm / 1_000_000,
        "confidence_ppm": item.confidence_ppm,
        "freshness": item.freshness,
        "max_age_days": item.max_age_days,
        "reuse": item.reuse,
        "revision": item.revision,
        "content_hash": item.content_hash,
        "concepts": item.concepts,
        "captured_by": item.captured_by,
        "deleted": item.deleted,
    }


def unknown_item(target: str) -> Exception:
    """The one answer for a target that names no item: never captured, or forgotten."""
    from mindledger.domain.knowledge_commands import UnknownKnowledgeError

    shown = repr(target)
    if len(target) > 80:  # an id of any length may be sent: the line stays a line
        shown = f"{target[:60]!r}... ({len(target):,} characters)"
    return UnknownKnowledgeError(f"no knowledge item is {shown}; `mind knowledge list` shows them")


def resolve_item(home: Home, target: str) -> str:
    """The intent hash of the one item `target` names (id, id prefix or its question); an
    unknown or ambiguous target changes nothing and says which items it could mean. A
    forgotten item is unknown (the mind finds none; the read model never names one)."""
    from mindledger.domain.knowledge_commands import AmbiguousKnowledgeError
    from mindledger.projections.queries.knowledge_queries import matching_items

    asked = _on_mind(home, lambda app: app.knowledge_for(target)) if target.strip() else None
    with read_model(home) as con:
        found = matching_items(con, target, [asked.intent_hash] if asked is not None else [])
    if not found:
        raise unknown_item(target)
    if len(found) > 1:
        listed = ", ".join(f"{r['item_id']} ({r['question'] or 'deleted'})" for r in found[:10])
        raise AmbiguousKnowledgeError(
            f"{target!r} names {len(found)} knowledge items: {listed}; nothing changed, give "
            "more of the id",
            [r["item_id"] for r in found],
        )
    return str(found[0]["intent_hash"])


def change_json(change: Any) -> dict[str, Any]:
    """A knowledge change (capture, decision, edit, delete) as `--json` shows it."""
    return {
        "id": change.item_id,
        "revision": change.revision,
        "state": change.state,
        "confidence_ppm": change.confidence_ppm,
        "created": change.created,
    }


def _on_mind(home: Home, act: Callable[[Any], T]) -> T:
    """Run one owner action on this home's application, closed afterwards."""
    app = open_mind(home)
    try:
        return act(app)
    finally:
        app.close()


def remember_item(
    home: Home,
    text: str,
    question: str | None = None,
    concepts: Sequence[str] = (),
    state: str | None = None,
    confidence: str | None = None,
    freshness: str | None = None,
    reuse: str | None = None,
) -> Any:
    """`mind remember`: the owner's capture (a fraction as `confidence`), as its change."""
    from mindledger.domain.knowledge_commands import confidence_ppm

    ppm = confidence_ppm(confidence) if confidence is not None else None
    return _on_mind(
        home,
        lambda app: app.remember(
            text,
            question,
            tuple(concepts),
            cast(Any, state),
            ppm,
            cast(Any, freshness),
            cast(Any, reuse),
        ),
    )


def judge_item(home: Home, target: str, judgement: Judgement, note: str | None = None) -> Any:
    """`mind knowledge verify|dispute|retract ID`: the owner's decision, as its change."""
    hash_ = resolve_item(home, target)
    return _on_mind(home, lambda app: app.judge_knowledge(hash_, judgement, note=note))


def edit_item(home: Home, target: str, answer: str) -> Any:
    """`mind knowledge edit ID ANSWER`: a new revision, as its change."""
    hash_ = resolve_item(home, target)
    return _on_mind(home, lambda app: app.edit_knowledge(hash_, answer))


def delete_item(home: Home, target: str, reason: str | None = None) -> Any:
    """`mind knowledge delete ID`: a tombstone revision, as its change."""
    hash_ = resolve_item(home, target)
    return _on_mind(home, lambda app: app.delete_knowledge(hash_, reason=reason))


def decide_turn(home: Home, target: str, judgement: Judgement) -> Any:
    """`mind approve|discard TURN`: the turn's answer decided, as its change (TURN: see
    mindledger/turn_refs.py)."""
    from mindledger.turn_refs import resolve_turn

    turn_id = resolve_turn(home, target)
    return _on_mind(home, lambda app: app.decide_turn(turn_id, judgement))


def knowledge_listing(home: Home, include_deleted: bool = False) -> list[dict[str, Any]]:
    """`mind knowledge list --json`."""
    from mindledger.projections.queries.knowledge_queries import knowledge_items

    with read_model(home) as con:
        return knowledge_items(con, include_deleted)


def knowledge_shown(home: Home, target: str, history: bool = False) -> dict[str, Any]:
    """`mind knowledge show ID [--history] --json`."""
    hash_ = resolve_item(home, target)
    app = open_mind(home)
    try:
        item = app.knowledge_item(hash_)
        if item is None:  # forgotten since the read model was published
            raise unknown_item(target)
        data: dict[str, Any] = {"item": item_json(item)}
        data["provenance"] = (
            [p.model_dump(mode="json") for p in item.provenance] if not item.deleted else []
        )
        if history:
            data["history"] = [
                {
                    "type": type(e).__name__.lower(),
                    "version": e.originator_version,
                    **e.model_dump(mode="json", exclude={"originator_id", "originator_version"}),
                }
                for e in app.knowledge_history(hash_)
            ]
        return data
    finally:
        app.close()


def ask_json(outcome: Any) -> dict[str, Any]:
    """An ask's outcome as `mind ask --json` shows it."""
    item = outcome.item if outcome.item is not None and not outcome.item.deleted else None
    return {
        "route": outcome.route,
        "answer": outcome.answer,
        "decision": outcome.decision,
        "reasons": outcome.reasons,
        "score": outcome.score,
        "item": item_json(outcome.item),
        "provenance": [p.model_dump(mode="json") for p in item.provenance] if item else [],
        "semantic": {
            "enabled": outcome.semantic == "on",
            "reason": None if outcome.semantic == "on" else outcome.semantic.removeprefix("off: "),
        },
        "candidates": [
            {k: v for k, v in c.items() if k != "intent_hash"} for c in outcome.candidates
        ],
        "turn": outcome.turn.turn_id.hex if outcome.turn else None,
        "stored": outcome.stored,
        "failure": outcome.turn.failure if outcome.turn else None,
    }
