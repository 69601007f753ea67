"""`mind forget`: the command; the crash-safe use case is the floor's (`mindledger.forget`)."""

from __future__ import annotations

import sys
from typing import Any

import click

from mindledger.cli.floor import opened
from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError


@click.command()
@click.option(
    "--turn",
    "turn",
    metavar="ID",
    help="A turn (its id or a prefix, as `mind turn --json` prints it): its message, reply, "
    "prompt and what its message asked to remember.",
)
@click.option(
    "--conversation",
    metavar="ID",
    help='An imported conversation (`mind query "SELECT * FROM conversations"`): every '
    "message, and the records its import kept.",
)
@click.option("--speaker", metavar="NAME", help="Everything this speaker said (any case).")
@click.option(
    "--commitment",
    metavar="CID",
    help="A commitment (its whole CID), every episode, and the turns whose reply made or "
    "changed it.",
)
@click.option(
    "--concept",
    metavar="TOKEN",
    help="A concept's definitions, aliases and relations, and the turns whose reply changed it.",
)
@click.option(
    "--thread",
    metavar="ID",
    help="A thread's label, content, work and resolution, and the turns whose reply changed it.",
)
@click.option("--knowledge", metavar="ID", help="A knowledge item and the questions routed to it.")
@click.option(
    "--before",
    metavar="TIME",
    help="Everything recorded before this ISO-8601 time (when it was recorded here: an import "
    "of older messages is recorded when it ran).",
)
@click.option("--dry-run", is_flag=True, help="Count what would go (no content); change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def forget(home: Home, /, dry_run: bool, yes: bool, as_json: bool, **given: str | None) -> None:
    """Forget for good what one selector names: its words' keys are destroyed, so the ledger's
    ciphertext can never be read again, and every derived copy is rebuilt without them. The
    hash chain still verifies; a `Forgotten` event records the selector, counts, time and who
    (never the content). Turns that quoted what goes lose their sent prompt too.

    Example:

        mind forget --speaker Caroline --dry-run
        mind forget --commitment c3f1a9e2b7d --yes
    """
    chosen = [(k, v) for k, v in given.items() if v is not None]
    if len(chosen) != 1:
        raise InvalidInputError(
            "give exactly one of --turn, --conversation, --speaker, --commitment, --concept, "
            "--thread, --knowledge, --before (`mind forget --help`)"
        )
    mind = opened(home)
    mind.via = "cli"  # what the Forgotten event records as the way it came
    kind, value = chosen[0]
    if not dry_run and not yes:
        preview = mind.forget(kind, value, dry_run=True).model_dump(mode="json")
        if preview.get("keys", 0) == 0:  # what `--yes` would answer: nothing is left
            _print({**preview, "dry_run": False, "already_forgotten": True}, as_json)
            return
        if not sys.stdin.isatty():  # refused in one line: no preview to read, nothing to ask
            raise InvalidInputError(
                f"forgetting cannot be undone: add --yes to confirm it ({preview['events']} "
                f"events, {preview['keys']} keys; --dry-run lists them)"
            )
        _print(preview, as_json=False, to_err=True)
        click.confirm("Forget this for good?", abort=True, err=True)
    _print(mind.forget(kind, value, dry_run=dry_run).model_dump(mode="json"), as_json)


def _print(data: dict[str, Any], as_json: bool, to_err: bool = False) -> None:
    if as_json:
        emit_json(data)
        return
    what = f"--{data['selector']} {data['value']}"
    if data.get("dry_run"):
        head = f"would forget {what}: {data['events']} events, {data['keys']} keys"
    elif data.get("already_forgotten") or not data.get("forgotten"):
        head = f"nothing left to forget for {what}: already forgotten"
    else:
        head = f"forgot {what}: {data['events']} events, {data['keys']} keys destroyed"
    echo(head, err=to_err)
    for kind, n in data["counts"].items():
        echo(f"  {kind:<14} {n}", err=to_err)
    if data.get("context_turns"):
        echo(f"and the sent prompts of {data['context_turns']} turns that quoted it", err=to_err)
    if data.get("unsealed"):
        echo(
            f"Warning: {data['unsealed']} of these events were written before sealing: their "
            "words stay in the clear",
            err=True,
        )


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(forget)
