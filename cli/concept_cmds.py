"""Commands for concepts: concept define/alias/relate, concepts."""

from __future__ import annotations

import click

from mindledger.cli.output import echo, emit_json, table
from mindledger.compose import Home, open_mind, read_model


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
    version = open_mind(home).define_concept(token, definition)
    if as_json:
        emit_json({"token": token.strip().lower(), "version": version})
        return
    echo(f"{token.strip().lower()} v{version}")


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
    added = open_mind(home).alias_concept(token, alias)
    if as_json:
        emit_json({"token": token.strip().lower(), "alias": alias, "added": added})
        return
    echo(f"alias {alias!r} " + ("added" if added else "already present; nothing changed"))


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
    added = open_mind(home).relate_concepts(source, target, relation)
    if as_json:
        emit_json({"source": source, "target": target, "relation": relation, "added": added})
        return
    echo(f"{source} -{relation}-> {target} " + ("" if added else "(already present)"))


@concept.command()
@click.argument("token")
@click.option("--commitment", "cid", help="Bind to a commitment CID.")
@click.option("--thread", "thread_id", help="Bind to a thread id.")
@click.option("--event", "position", type=click.IntRange(1), help="Bind to a ledger position.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def bind(
    home: Home,
    token: str,
    cid: str | None,
    thread_id: str | None,
    position: int | None,
    as_json: bool,
) -> None:
    """Bind TOKEN to one commitment, thread or ledger event.

    Example:

        mind concept bind project.alpha --commitment c1a2b3c4d5e
    """
    from mindledger.cli.thread_cmds import resolve_thread_id
    from mindledger.domain.concept import BindingKind
    from mindledger.domain.errors import InvalidInputError
    from mindledger.domain.thread import short_id

    kind: BindingKind
    given = [x for x in (cid, thread_id, position) if x is not None]
    if len(given) != 1:
        raise InvalidInputError("give exactly one of --commitment, --thread or --event")
    app = open_mind(home)
    if cid is not None:
        kind, target = "commitment", app.commitment(cid).cid
    elif thread_id is not None:
        kind, target = "thread", short_id(resolve_thread_id(home, thread_id))
    else:
        import contextlib

        from mindledger.compose import open_reader

        with contextlib.closing(open_reader(home)) as reader:
            head = reader.head()[0]
        if position is None or position > head:
            raise InvalidInputError(f"there is no event at position {position}")
        kind, target = "event", str(position)
    app.bind_concept(token, kind, target)
    if as_json:
        emit_json({"token": token, "kind": kind, "target": target})
        return
    echo(f"{token} bound to {kind} {target}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def concepts(home: Home, as_json: bool) -> None:
    """List concepts with their current definition.

    Example:

        mind concepts --json
    """
    from mindledger.projections.queries import listings as queries

    with read_model(home) as con:
        rows = queries.concepts(con)
    if as_json:
        emit_json(rows)
    else:
        table(rows, ["token", "version", "aliases", "definition"], "No concepts.")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(concept)
    group.add_command(concepts)
