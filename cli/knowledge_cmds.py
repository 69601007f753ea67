"""Knowledge: `mind remember`, `mind ask`, `mind knowledge ...`, `mind approve`, `mind discard`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import click

from mindledger.cli.floor import opened
from mindledger.cli.output import echo, emit_json, table
from mindledger.cli.turn_cmds import check_mock_flags, model_options, reply_text
from mindledger.compose import Home
from mindledger.domain.choices import FRESHNESS, POLICIES, STATES

if TYPE_CHECKING:
    from mindledger.results import KnowledgeChange

JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


# What each owner judgement did, for the one line printed after it.
_PAST = {"verify": "verified", "dispute": "disputed", "retract": "retracted"}


def _print_change(change: KnowledgeChange, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(change.model_dump(mode="json"))
    else:
        echo(
            f"{change.id} {verb} (revision {change.revision}, {change.state}, "
            f"{change.confidence_ppm / 1_000_000:.2f})"
        )


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
    change = opened(home).remember(
        text,
        question=question,
        concepts=concepts,
        state=state,
        confidence=confidence,
        freshness=freshness,
        reuse=reuse,
    )
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
    if spec is not None and spec != "mock":  # a scripted reply for a model that would not use it
        check_mock_flags(spec, mock_reply)
    data = (
        opened(home)
        .ask(
            question,
            current=current,
            model=spec,
            mock_reply=reply_text(mock_reply),
            api_base=api_base,
            budget=budget,
        )
        .model_dump(mode="json")
    )
    failure = data["failure"]
    if as_json:
        emit_json(data)
    elif failure is not None:  # no answer to print: say why, as a failed turn does
        kept = f"; the question is kept in turn {data['turn']}" if data["turn"] else ""
        echo(f"Error: generation failed ({failure['kind']}): {failure['message']}{kept}", err=True)
    else:
        echo(data["answer"])
        reasons = data["reasons"]
        echo(f"  [{data['route']}{': ' + ', '.join(reasons) if reasons else ''}]", err=True)
    if failure is not None:
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
    found = opened(home).knowledge(include_deleted).model_dump(mode="json")
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
    data = opened(home).knowledge_item(target, history=history).model_dump(mode="json")
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


def _judge(judgement: Literal["verify", "dispute", "retract"], help_text: str) -> click.Command:
    @click.command(judgement, help=help_text)
    @click.argument("target", metavar="ID")
    @click.option("--note", help="Why.")
    @JSON
    @click.pass_obj
    def command(home: Home, target: str, note: str | None, as_json: bool) -> None:
        change = opened(home).judge(target, judgement, note)
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
    _print_change(opened(home).edit_knowledge(target, answer), as_json, "edited")


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
    _print_change(opened(home).delete_knowledge(target, reason), as_json, "deleted")


def _decide(judgement: Literal["approve", "discard"], help_text: str) -> click.Command:
    @click.command(judgement, help=help_text)
    @click.argument("target", metavar="TURN")
    @JSON
    @click.pass_obj
    def command(home: Home, target: str, as_json: bool) -> None:
        mind = opened(home)
        change = mind.approve(target) if judgement == "approve" else mind.discard(target)
        _print_change(change, as_json, "approved" if judgement == "approve" else "discarded")

    return command


TURN_HELP = (
    "TURN is last, the turn's number (12 or #12), its id, or 4+ hex digits of its id; all "
    "digits is a number first, then an id prefix."
)

approve = _decide(
    "approve",
    "Approve a turn's answer: it becomes verified knowledge (0.95).\n\n" + TURN_HELP + "\n\n"
    "Example:\n\n    mind approve 12",
)
discard = _decide(
    "discard",
    "Discard a turn's answer: its knowledge is retracted (0 ppm) and never reused.\n\n"
    + TURN_HELP
    + "\n\n"
    "Example:\n\n    mind discard 12",
)


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    for command in (remember, ask, knowledge, approve, discard):
        group.add_command(command)
