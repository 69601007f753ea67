"""Commands for commitments: commit, close, commitments."""

from __future__ import annotations

import click

from mindledger.cli.floor import opened
from mindledger.cli.output import echo, emit_json
from mindledger.cli.quick_path import print_commitments
from mindledger.compose import Home
from mindledger.domain.choices import ORIGINS


@click.command()
@click.argument("text")
@click.option("--origin", type=click.Choice(ORIGINS), default="owner", show_default=True)
@click.option("--thread", "thread_id", metavar="ID", help="The thread this commitment serves.")
@click.option(
    "--concept",
    "concepts",
    multiple=True,
    metavar="TOKEN",
    help="A concept this commitment is about (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def commit(
    home: Home,
    text: str,
    origin: str,
    thread_id: str | None,
    concepts: tuple[str, ...],
    as_json: bool,
) -> None:
    """Open a commitment and print its CID (the same open text is a no-op that says so).

    Example:

        mind commit "Send the weekly report on Friday" --concept project.alpha
    """
    opening = opened(home).commit(text, origin=origin, thread=thread_id, concepts=concepts)
    done = opening.model_dump(mode="json")
    if as_json:
        emit_json(done)
    elif done["opened"]:
        echo(done["cid"])
    else:
        echo(f"{done['cid']} (already open; nothing changed)")


@click.command()
@click.argument("cid")
@click.option("--reason", help="Why it is closed (done, dropped, ...).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def close(home: Home, cid: str, reason: str | None, as_json: bool) -> None:
    """Close the open commitment CID.

    Example:

        mind close c1a2b3c4d5e --reason "sent on Friday"
    """
    done = opened(home).close_commitment(cid, reason).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(f"closed {done['cid']}: {done['text']}")


@click.command()
@click.option("--all", "include_closed", is_flag=True, help="Include closed commitments.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def commitments(home: Home, include_closed: bool, as_json: bool) -> None:
    """List open commitments (all of them with --all).

    Example:

        mind commitments --all --json
    """
    print_commitments(opened(home).commitments(include_closed).model_dump(mode="json"), as_json)


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    for command in (commit, close, commitments):
        group.add_command(command)
