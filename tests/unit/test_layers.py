"""The architecture as a test: dependencies point inward only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OURS = {"domain", "projections", "adapters", "cli", "service"}
ALLOWED = {
    "domain": set(),
    "projections": {"domain"},
    "adapters": {"domain"},
    "cli": {"domain", "projections", "adapters", "service"},
    # The server is a front-end beside the CLI: it composes through cli.compose and calls the
    # same use cases (and the same JSON builders) the commands call.
    "service": {"domain", "projections", "adapters", "cli"},
}
# The command line reaches the server package only from the commands that start it, and only
# lazily (inside the command), so no other command pays for importing the HTTP stack.
CLI_MAY_IMPORT_SERVICE = {
    "cli/serve_cmds.py",
    "cli/mcp_cmds.py",
    "cli/web_cmds.py",
    "cli/forget_cmds.py",
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names & OURS


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_the_layers_inside_it(layer: str) -> None:
    offenders = {
        str(p.relative_to(REPO)): sorted(imported_packages(p) - ALLOWED[layer] - {layer})
        for p in (REPO / layer).rglob("*.py")
    }

    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_cli_imports_the_service_only_lazily_from_the_serving_commands() -> None:
    offenders = []
    for p in (REPO / "cli").rglob("*.py"):
        tree = ast.parse(p.read_text())
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = [getattr(node, "module", None) or ""] + [a.name for a in node.names]
            if not any(n.split(".")[0] == "service" for n in names):
                continue
            rel = str(p.relative_to(REPO))
            if rel not in CLI_MAY_IMPORT_SERVICE or id(node) in top:
                offenders.append(rel)

    assert offenders == []


def test_nothing_imports_litellm_at_module_level() -> None:
    top_level = [
        str(p.relative_to(REPO))
        for layer in OURS
        for p in (REPO / layer).rglob("*.py")
        for node in ast.parse(p.read_text()).body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and "litellm"
        in (getattr(node, "module", None) or "") + ",".join(a.name for a in node.names)
    ]

    assert top_level == []
