"""The mind as a graph of concepts, commitments and threads: its counts, a node's neighbours,
the whole graph as GraphML or JSON (networkx, loaded only when a graph is asked for)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mindledger.compose import Home, read_model
from mindledger.domain.errors import InvalidInputError

GRAPH_FORMATS = ("graphml", "json")


def _graph(home: Home) -> Any:
    from mindledger.projections.queries.graph import build_graph

    with read_model(home) as con:
        return build_graph(con)


def graph_stats(home: Home) -> dict[str, Any]:
    """Nodes by kind, edges by relation, components (what `mind graph stats --json` prints)."""
    from mindledger.projections.queries.graph import stats

    data: dict[str, Any] = stats(_graph(home))
    return data


def graph_neighbors(home: Home, node: str, depth: int = 1) -> list[dict[str, Any]]:
    """What is within `depth` hops of `node` (a concept token, CID, thread id or `kind:id`),
    nearest first (what `mind graph neighbors --json` prints)."""
    from mindledger.projections.queries.graph import neighbors, resolve_node

    g = _graph(home)
    rows: list[dict[str, Any]] = neighbors(g, resolve_node(g, node), depth)
    return rows


def graph_text(home: Home, fmt: str = "graphml") -> str:
    """The whole graph as GraphML or node-link JSON text (`mind graph export` to stdout)."""
    from mindledger.projections.queries.graph import export

    _check_format(fmt)
    text: str = export(_graph(home), fmt)
    return text


def export_graph(home: Home, out: Path, fmt: str = "graphml") -> dict[str, Any]:
    """Write the graph to `out` as GraphML or JSON (a file replaced only once the text is
    whole; a FIFO, device or `-` written; a symbolic link refused: `output_paths`); what
    `mind graph export --out FILE --json` prints."""
    from mindledger.output_paths import check_output, output_file, refuse_home_file
    from mindledger.projections.queries.graph import export

    _check_format(fmt)
    refuse_home_file(home, out, "out")
    check_output(out, "out")
    g = _graph(home)
    text = export(g, fmt) + "\n"  # made before anything is written
    with output_file(out, "out", private=True) as file:  # commitments' and concepts' words
        file.write(text.encode("utf-8"))
    return {
        "out": str(out),
        "format": fmt,
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
    }


def _check_format(fmt: str) -> None:
    if fmt not in GRAPH_FORMATS:
        raise InvalidInputError(f"format {fmt!r} is not one of {', '.join(GRAPH_FORMATS)}")
