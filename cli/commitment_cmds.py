"""Commands for commitments: commit, close, commitments."""

from __future__ import annotations

import click

from mindledger.cli.output import echo, emit_json, table
from mindledger.compose import Home, open_mind, read_model
from mindledger.domain.commitment import ORIGINS


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
    from mindledger.cli.thread_cmds import resolve_thread_id
    from mindledger.domain.thread import short_id

    thread = short_id(resolve_thread_id(home, thread_id)) if thread_id else None
    app = open_mind(home)
    for token in concepts:
        app.concept(token)  # unknown concepts are rejected before anything is written
    outcome = app.open_commitment(
        text,
        origin=origin,  # type: ignore[arg-type]  # click.Choice guarantees an Origin
        thread_id=thread,
        concepts=concepts,
    )
    if as_json:
        emit_json({"cid": outcome.cid, "episode": outcome.episode, "opened": outcome.opened})
    elif outcome.opened:
        echo(outcome.cid)
    else:
        echo(f"{outcome.cid} (already open; nothing changed)")


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
    commitment = open_mind(home).close_commitment(cid, reason)
    if as_json:
        emit_json(
            {
                "cid": commitment.cid,
                "episode": commitment.episode,
                "text": commitment.text,
                "closed": True,
                "reason": reason,
            }
        )
        return
    echo(f"closed {commitment.cid}: {commitment.text}")


@click.command()
@click.option("--all", "include_closed", is_flag=True, help="Include closed commitments.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def commitments(home: Home, include_closed: bool, as_json: bool) -> None:
    """List open commitments (all of them with --all).

    Example:

        mind commitments --all --json
    """
    from mindledger.projections.queries import listings as queries

    with read_model(home) as con:
        rows = queries.commitments(con, include_closed)
    if as_json:
        emit_json(rows)
    else:
        table(rows, ["cid", "status", "origin", "opened_at", "text"], "No commitments.")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    for command in (commit, close, commitments):
        group.add_command(command)
