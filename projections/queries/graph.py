"""The mind as a graph (networkx), built from the read models: concepts, commitments, threads."""

from __future__ import annotations

from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026
import networkx as nx

from mindledger.domain.errors import NotFoundError


class UnknownNodeError(NotFoundError):
    """Raised when a graph node id names nothing."""


def thread_short_id(thread: str) -> str:
    """`t` + 8 hex digits, whether given a short id or a full stream id."""
    t = thread.lower().replace("-", "")
    return t if t.startswith("t") and len(t) == 9 else "t" + t[:8]


def build_graph(con: duckdb.DuckDBPyConnection) -> Any:
    """A directed multigraph: nodes `kind:id`, edges labelled with their relation."""
    g = nx.MultiDiGraph()
    for token, definition, version in con.execute(
        "SELECT token, definition, version FROM concepts"
    ).fetchall():
        g.add_node(
            f"concept:{token}", kind="concept", label=token, text=definition, version=version
        )
    for cid, text, status, thread, concepts in con.execute(
        "SELECT cid, text, status, thread, concepts FROM commitments ORDER BY opened_position"
    ).fetchall():
        node = f"commitment:{cid}"
        g.add_node(node, kind="commitment", label=cid, text=text, status=status)
        if thread:
            g.add_edge(node, f"thread:{thread_short_id(thread)}", relation="serves")
        for token in concepts or []:
            g.add_edge(node, f"concept:{token}", relation="about")
    for tid, label, status in con.execute("SELECT id, label, status FROM threads").fetchall():
        g.add_node(f"thread:{tid}", kind="thread", label=tid, text=label, status=status)
    for source, target, relation in con.execute(
        "SELECT source, target, relation FROM concept_relations ORDER BY position"
    ).fetchall():
        g.add_edge(f"concept:{source}", f"concept:{target}", relation=relation)
    for token, kind, target in con.execute(
        "SELECT token, kind, target FROM concept_bindings ORDER BY position"
    ).fetchall():
        g.add_edge(f"concept:{token}", f"{kind}:{target}", relation="bound")
    for node in g.nodes:
        g.nodes[node].setdefault("kind", node.split(":", 1)[0])
        g.nodes[node].setdefault("label", node.split(":", 1)[1])
    return g


def resolve_node(g: Any, given: str) -> str:
    """Accept `project.alpha`, `c1a2b3c4d`, `t1a2b3c4d` or a full `kind:id`."""
    candidates = (
        [given]
        if ":" in given
        else [f"{kind}:{given}" for kind in ("concept", "commitment", "thread", "event")]
    )
    for node in candidates:
        if node in g:
            return node
    raise UnknownNodeError(f"no graph node {given!r}; `mind graph stats` shows what is there")


def neighbors(g: Any, node: str, depth: int) -> list[dict[str, Any]]:
    """Nodes within `depth` hops (either direction), nearest first."""
    distances = nx.single_source_shortest_path_length(
        g.to_undirected(as_view=True), node, cutoff=depth
    )
    return [
        {
            "id": n,
            "kind": g.nodes[n]["kind"],
            "label": g.nodes[n]["label"],
            "distance": d,
            "text": g.nodes[n].get("text"),
        }
        for n, d in sorted(distances.items(), key=lambda kv: (kv[1], kv[0]))
        if n != node
    ]


def stats(g: Any) -> dict[str, Any]:
    """Counts by node kind and relation, and connectivity."""
    kinds: dict[str, int] = {}
    for _, data in g.nodes(data=True):
        kinds[data["kind"]] = kinds.get(data["kind"], 0) + 1
    relations: dict[str, int] = {}
    for _, _, data in g.edges(data=True):
        relations[data["relation"]] = relations.get(data["relation"], 0) + 1
    return {
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "by_kind": kinds,
        "by_relation": relations,
        "components": nx.number_weakly_connected_components(g) if len(g) else 0,
    }


def export(g: Any, fmt: str) -> str:
    """GraphML or node-link JSON text."""
    if fmt == "graphml":
        clean = nx.MultiDiGraph()
        for n, data in g.nodes(data=True):
            clean.add_node(n, **{k: str(v) for k, v in data.items() if v is not None})
        for a, b, data in g.edges(data=True):
            clean.add_edge(a, b, **{k: str(v) for k, v in data.items()})
        return "\n".join(nx.generate_graphml(clean))
    import json

    return json.dumps(nx.node_link_data(g, edges="edges"), indent=2, default=str)
