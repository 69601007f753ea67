"""Commands for concepts: concept define/alias/relate, concepts."""

from __future__ import annotations

import click

from mindledger.cli.floor import opened
from mindledger.cli.output import echo, emit_json, table
from mindledger.compose import Home


@click.group()
def concept() -> None:
    """Define concepts, give them aliases and relate them.

    Example:

        mind concept define project.alpha "The Q3 rewrite of the billing service"
    """


@concept.command()
@click.argument("token")
@click.argument("definition")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def define(home: Home, token: str, definition: str, as_json: bool) -> None:
    """Define TOKEN (or record a new version of its definition).

    Example:

        mind concept define user.identity "Who the user says they are"
    """
    done = opened(home).define_concept(token, definition).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(f"{done['token']} v{done['version']}")


@concept.command()
@click.argument("token")
@click.argument("alias")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def alias(home: Home, token: str, alias: str, as_json: bool) -> None:
    """Give TOKEN another name, ALIAS.

    Example:

        mind concept alias project.alpha "billing rewrite"
    """
    done = opened(home).alias_concept(token, alias).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(f"alias {alias!r} " + ("added" if done["added"] else "already present; nothing changed"))


@concept.command()
@click.argument("source")
@click.argument("target")
@click.option("--as", "relation", required=True, help="The relation, e.g. part-of, depends-on.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def relate(home: Home, source: str, target: str, relation: str, as_json: bool) -> None:
    """Relate SOURCE to TARGET with a typed edge.

    Example:

        mind concept relate project.alpha team.billing --as owned-by
    """
    done = opened(home).relate_concepts(source, target, relation).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(f"{source} -{relation}-> {target} " + ("" if done["added"] else "(already present)"))


@concept.command()
@click.argument("token")
@click.option("--commitment", help="Bind to a commitment CID.")
@click.option("--thread", help="Bind to a thread id.")
@click.option("--event", "position", type=click.IntRange(1), help="Bind to a ledger position.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def bind(
    home: Home,
    token: str,
    commitment: str | None,
    thread: str | None,
    position: int | None,
    as_json: bool,
) -> None:
    """Bind TOKEN to one commitment, thread or ledger event.

    Example:

        mind concept bind project.alpha --commitment c1a2b3c4d5e
    """
    bound = opened(home).bind_concept(
        token, commitment=commitment, thread=thread, position=position
    )
    done = bound.model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(f"{token} bound to {done['kind']} {done['target']}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def concepts(home: Home, as_json: bool) -> None:
    """List concepts with their current definition.

    Example:

        mind concepts --json
    """
    rows = opened(home).concepts().model_dump(mode="json")
    if as_json:
        emit_json(rows)
    else:
        table(rows, ["token", "version", "aliases", "definition"], "No concepts.")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(concept)
    group.add_command(concepts)
