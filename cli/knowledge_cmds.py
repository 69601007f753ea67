"""Knowledge: `mind remember`, `mind ask`, `mind knowledge ...`, `mind approve`, `mind discard`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast
from uuid import UUID

import click

from mindledger.cli.output import echo, emit_json, table
from mindledger.cli.turn_cmds import _model, model_options
from mindledger.compose import Home, asker, open_mind, read_model, turn_session
from mindledger.domain.knowledge import FRESHNESS, POLICIES, STATES, Judgement, Knowledge

T = TypeVar("T")
JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


# What each owner judgement did, for the one line printed after it.
_PAST = {"verify": "verified", "dispute": "disputed", "retract": "retracted"}


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

    return UnknownKnowledgeError(
        f"no knowledge item is {target!r}; `mind knowledge list` shows them"
    )


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


def resolve_turn(home: Home, target: str) -> UUID:
    """The turn a number or an id prefix names (exactly one)."""
    from mindledger.domain.errors import MindError
    from mindledger.projections.queries.knowledge_queries import matching_turns

    with read_model(home) as con:
        found = matching_turns(con, target)
    if len(found) != 1:
        which = ", ".join(f"#{n} {s[:8]}" for s, n in found[:10])
        raise MindError(
            f"{target!r} names {'no turn' if not found else f'{len(found)} turns: {which}'}; "
            "nothing changed, give the turn's number or more of its id"
        )
    return UUID(found[0][0])


def change_json(change: Any) -> dict[str, Any]:
    """A knowledge change (capture, decision, edit, delete) as `--json` shows it."""
    return {
        "id": change.item_id,
        "revision": change.revision,
        "state": change.state,
        "confidence_ppm": change.confidence_ppm,
        "created": change.created,
    }


def _print_change(change: Any, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(change_json(change))
    else:
        echo(
            f"{change.item_id} {verb} (revision {change.revision}, {change.state}, "
            f"{change.confidence_ppm / 1_000_000:.2f})"
        )


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
    """`mind approve|discard TURN`: the turn's answer decided, as its change."""
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


@click.command()
@click.argument("text")
@click.option("--question", metavar="Q", help="The question TEXT answers (default: TEXT).")
@click.option(
    "--about", "concepts", multiple=True, metavar="CONCEPT", help="A concept (repeatable)."
)
@click.option("--state", type=click.Choice(STATES), help="Validation state (default unverified).")
@click.option("--confidence", metavar="FRACTION", help="0 to 1, e.g. 0.92 (default 0.5).")
@click.option("--freshness", type=click.Choice(FRESHNESS), help="Freshness class (default stable).")
@click.option(
    "--reuse", type=click.Choice(POLICIES), help="Reuse policy (default reuse-unless-stale)."
)
@JSON
@click.pass_obj
def remember(
    home: Home,
    text: str,
    question: str | None,
    concepts: tuple[str, ...],
    state: str | None,
    confidence: str | None,
    freshness: str | None,
    reuse: str | None,
    as_json: bool,
) -> None:
    """Keep TEXT as the owner's knowledge: the answer to --question (or to itself). The same
    question again adds a revision to the same item.

    Example:

        mind remember "Multi-Channel Memory Architecture" --question "¿Qué es MCMA?"

        mind remember "Paris" --question "capital of France" --state verified --confidence 0.99
    """
    change = remember_item(home, text, question, concepts, state, confidence, freshness, reuse)
    _print_change(change, as_json, "captured" if change.created else "revised")


@click.command()
@click.argument("question")
@click.option("--current", is_flag=True, help="Current data is wanted: stored answers revalidate.")
@model_options
@JSON
@click.pass_obj
def ask(
    home: Home,
    question: str,
    current: bool,
    spec: str | None,
    mock_reply: str | None,
    api_base: str | None,
    budget: int,
    as_json: bool,
) -> None:
    """Answer QUESTION from knowledge that may be reused (no model call), else through a turn
    whose answer is kept as unverified knowledge. The route, reasons and scores are recorded.

    Example:

        mind ask "¿Qué es MCMA?" --json
    """
    with turn_session(home) as service:
        outcome = asker(home, service).ask(
            question, lambda: _model(home, spec, mock_reply, api_base), current, budget
        )
    data = ask_json(outcome)
    if as_json:
        emit_json(data)
    else:
        echo(outcome.answer)
        echo(
            f"  [{outcome.route}{': ' + ', '.join(outcome.reasons) if outcome.reasons else ''}]",
            err=True,
        )
    if outcome.turn is not None and outcome.turn.status == "failed":
        raise SystemExit(1)


@click.group()
def knowledge() -> None:
    """What the mind knows: list, show, and the owner's decisions.

    Example:

        mind knowledge list
        mind knowledge verify k1a2b3
    """


@knowledge.command("list")
@click.option("--all", "include_deleted", is_flag=True, help="Include deleted items.")
@JSON
@click.pass_obj
def list_(home: Home, include_deleted: bool, as_json: bool) -> None:
    """List knowledge items with their state, confidence and freshness (--all: deleted ones
    too, without content; one whose words were forgotten has state `forgotten`).

    Example:

        mind knowledge list --json
    """
    found = knowledge_listing(home, include_deleted)
    if as_json:
        emit_json(found)
        return
    for row in found:
        row["confidence"] = row["confidence_ppm"] / 1_000_000
    shown = ["item_id", "state", "confidence", "freshness", "revision", "question"]
    table(found, shown + (["deleted"] if include_deleted else []), "No knowledge yet.")


@knowledge.command()
@click.argument("target", metavar="ID")
@click.option("--history", is_flag=True, help="Every revision and decision, from the ledger.")
@JSON
@click.pass_obj
def show(home: Home, target: str, history: bool, as_json: bool) -> None:
    """Show an item (by id, id prefix or its question); --history reads every revision from
    the ledger, those of a deleted item included.

    Example:

        mind knowledge show k1a2b3 --history
    """
    data = knowledge_shown(home, target, history)
    if as_json:
        emit_json(data)
        return
    shown = data["item"] or {}
    for key in (
        "id",
        "state",
        "confidence",
        "freshness",
        "reuse",
        "revision",
        "question",
        "answer",
    ):
        echo(f"{key:>10}: {shown.get(key)}")
    for entry in data.get("history", []):
        what = entry.get("answer") or entry.get("judgement") or entry.get("reason") or ""
        echo(f"  v{entry['version']} {entry['type']} {entry['timestamp']} {what}")


def _judge(judgement: Judgement, help_text: str) -> click.Command:
    @click.command(judgement, help=help_text)
    @click.argument("target", metavar="ID")
    @click.option("--note", help="Why.")
    @JSON
    @click.pass_obj
    def command(home: Home, target: str, note: str | None, as_json: bool) -> None:
        change = judge_item(home, target, judgement, note)
        _print_change(change, as_json, _PAST.get(judgement, f"{judgement}ed"))

    return command


knowledge.add_command(
    _judge(
        "verify", "Mark an item verified (0.95).\n\nExample:\n\n    mind knowledge verify k1a2b3"
    )
)
knowledge.add_command(
    _judge(
        "dispute",
        "Mark an item disputed: never reused or shown.\n\n"
        "Example:\n\n    mind knowledge dispute k1a2b3",
    )
)
knowledge.add_command(
    _judge(
        "retract",
        "Retract an item (0 ppm): never reused or shown.\n\n"
        "Example:\n\n    mind knowledge retract k1a2b3",
    )
)


@knowledge.command()
@click.argument("target", metavar="ID")
@click.argument("answer")
@JSON
@click.pass_obj
def edit(home: Home, target: str, answer: str, as_json: bool) -> None:
    """Give an item a new answer: a revision that keeps the previous one and its hash.

    Example:

        mind knowledge edit k1a2b3 "Multi-Channel Memory Architecture (MCMA)"
    """
    _print_change(edit_item(home, target, answer), as_json, "edited")


@knowledge.command()
@click.argument("target", metavar="ID")
@click.option("--reason", help="Why.")
@JSON
@click.pass_obj
def delete(home: Home, target: str, reason: str | None, as_json: bool) -> None:
    """Delete an item: a tombstone revision; its content leaves the read models and recall
    (`mind knowledge show ID --history` still reads the older revisions from the ledger).

    Example:

        mind knowledge delete k1a2b3 --reason "wrong"
    """
    _print_change(delete_item(home, target, reason), as_json, "deleted")


def _decide(judgement: Judgement, help_text: str) -> click.Command:
    @click.command(judgement, help=help_text)
    @click.argument("target", metavar="TURN")
    @JSON
    @click.pass_obj
    def command(home: Home, target: str, as_json: bool) -> None:
        change = decide_turn(home, target, judgement)
        _print_change(change, as_json, "approved" if judgement == "approve" else "discarded")

    return command


approve = _decide(
    "approve",
    "Approve a turn's answer (by number or id): it becomes verified knowledge (0.95).\n\n"
    "Example:\n\n    mind approve 12",
)
discard = _decide(
    "discard",
    "Discard a turn's answer: its knowledge is retracted (0 ppm) and never reused.\n\n"
    "Example:\n\n    mind discard 12",
)


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    for command in (remember, ask, knowledge, approve, discard):
        group.add_command(command)
