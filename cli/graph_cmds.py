"""The graph view: graph stats, graph neighbors, graph export."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.core import ParameterSource

from mindledger.cli.arguments import GivenPath
from mindledger.cli.floor import opened
from mindledger.cli.output import echo, emit_json, path_text, table, write_out
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError
from mindledger.graph import GRAPH_FORMATS


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
    data = opened(home).graph_stats().model_dump(mode="json")
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
    rows = opened(home).graph_neighbors(node_id, depth).model_dump(mode="json")
    if as_json:
        emit_json(rows)
    else:
        table(rows, ["distance", "kind", "label", "text"], "No neighbours.")


@graph.command(name="export")
@click.option(
    "--format", "fmt", type=click.Choice(GRAPH_FORMATS), default="graphml", show_default=True
)
@click.option(
    "--out",
    type=GivenPath(dir_okay=False, allow_dash=True, path_type=Path),
    default="-",
    help="File to write (default -, standard output). A file is replaced whole; a FIFO or "
    "device is written, and so is a symbolic link to one (/dev/stdout); any other link is "
    "refused.",
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
    from mindledger.output_paths import names_standard_output  # (tempfile, shutil: on use)

    to_file = not names_standard_output(out)  # `-` or `/dev/stdout`: printed here
    chosen = click.get_current_context().get_parameter_source("fmt")
    if as_json and not to_file and fmt != "json" and chosen != ParameterSource.DEFAULT:
        raise InvalidInputError(f"--json prints JSON, not {fmt}: give --out FILE, or drop one")
    if not to_file:  # data for a pipe, faithfully; made harmless only for a terminal
        text = opened(home).graph_text("json" if as_json else fmt).text + "\n"
        terminal = sys.stdout is not None and sys.stdout.isatty()  # None: started with it closed
        (echo if terminal else write_out)(text, nl=False)
        return
    # --json describes the result; the file always holds the --format asked for.
    done = opened(home).export_graph(out, fmt).model_dump(mode="json")
    if as_json:
        emit_json(done)
    else:
        echo(f"wrote {path_text(str(out))}")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(graph)
