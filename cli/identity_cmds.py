"""Commands for the mind's identity: identity, identity adopt."""

from __future__ import annotations

import click

from mindledger.cli.floor import opened
from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def identity(ctx: click.Context, as_json: bool) -> None:
    """Show the mind's name, model and the history of its identity.

    Example:

        mind identity --json
    """
    if ctx.invoked_subcommand is not None:
        return
    home: Home = ctx.obj
    data = opened(home).identity().model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    echo(f"{data.get('name')} (model {data.get('model')})")
    for h in data["history"]:
        detail = h["name"] or h["model"] or ""
        echo(f"  {h['position']:>6}  {h['time']}  {h['change']:<20} {detail}")


@identity.command()
@click.argument("name")
@click.option("--reason", help="Why the mind takes this name.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def adopt(home: Home, name: str, reason: str | None, as_json: bool) -> None:
    """Adopt NAME directly, as the owner (turns must propose then ratify instead).

    Example:

        mind identity adopt Echo --reason "chosen together"
    """
    done = opened(home).adopt_name(name, reason).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(f"the mind is now called {done['name']!r}")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(identity)
