"""The graph view: graph stats, graph neighbors, graph export."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from mindledger.cli.output import echo, emit_json, table
from mindledger.compose import Home, read_model
from mindledger.domain.errors import InvalidInputError


def _graph(home: Home) -> Any:
    from mindledger.projections.queries.graph import build_graph

    with read_model(home) as con:
        return build_graph(con)


@click.group()
def graph() -> None:
    """The mind as a graph of concepts, commitments and threads (networkx).

    Example:

        mind graph neighbors project.alpha --depth 2
    """


@graph.command(name="stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def stats_(home: Home, as_json: bool) -> None:
    """Count nodes by kind and edges by relation.

    Example:

        mind graph stats --json
    """
    from mindledger.projections.queries.graph import stats

    data = stats(_graph(home))
    if as_json:
        emit_json(data)
        return
    echo(f"{data['nodes']} nodes, {data['edges']} edges, {data['components']} components")
    for kind, n in sorted(data["by_kind"].items()):
        echo(f"  {kind:<12} {n}")
    for relation, n in sorted(data["by_relation"].items()):
        echo(f"  -{relation}-> {n}")


@graph.command(name="neighbors")
@click.argument("node_id", metavar="ID")
@click.option("--depth", default=1, show_default=True, type=click.IntRange(1, 10))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def neighbors_(home: Home, node_id: str, depth: int, as_json: bool) -> None:
    """Show what is within DEPTH hops of ID (a concept token, CID or thread id).

    Example:

        mind graph neighbors c1a2b3c4d5e --depth 2
    """
    from mindledger.projections.queries.graph import neighbors, resolve_node

    g = _graph(home)
    rows = neighbors(g, resolve_node(g, node_id), depth)
    if as_json:
        emit_json(rows)
    else:
        table(rows, ["distance", "kind", "label", "text"], "No neighbours.")


@graph.command(name="export")
@click.option(
    "--format", "fmt", type=click.Choice(["graphml", "json"]), default="graphml", show_default=True
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default="-",
    help="File to write (default stdout).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: with --out, what was written (the file keeps --format); else the graph.",
)
@click.pass_obj
def export_(home: Home, fmt: str, out: Path, as_json: bool) -> None:
    """Export the graph for Gephi, yEd, Cytoscape (GraphML) or scripts (JSON).

    Example:

        mind graph export --format graphml --out mind.graphml
    """
    from mindledger.cli.output_paths import refuse_home_file, replaced_on_success
    from mindledger.projections.queries.graph import export

    to_file = str(out) != "-"
    chosen = click.get_current_context().get_parameter_source("fmt")
    if as_json and not to_file and fmt != "json" and chosen != ParameterSource.DEFAULT:
        raise InvalidInputError(f"--json prints JSON, not {fmt}: give --out FILE, or drop one")
    if to_file:
        refuse_home_file(home, out, "--out")
    g = _graph(home)
    if not to_file:  # data for a pipe, faithfully; made harmless only for a terminal
        text = export(g, "json" if as_json else fmt) + "\n"
        (echo if sys.stdout.isatty() else click.echo)(text, nl=False)
        return
    # --json describes the result; the file always holds the --format asked for. The text is
    # made before anything is written, and the file replaced only once it is whole.
    text = export(g, fmt) + "\n"
    with replaced_on_success(out) as temp:
        temp.write_text(text, encoding="utf-8")
    if as_json:
        summary = {"nodes": g.number_of_nodes(), "edges": g.number_of_edges()}
        emit_json({"out": str(out), "format": fmt, **summary})
    else:
        echo(f"wrote {click.format_filename(str(out))}")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(graph)
