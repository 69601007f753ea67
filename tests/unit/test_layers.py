"""The architecture as a test: dependencies point inward only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OURS = {"domain", "projections", "adapters", "cli", "service", "mindledger"}
ALLOWED = {
    "domain": set(),
    "projections": {"domain"},
    "adapters": {"domain"},
    # The floor: the composition root and the use cases every front-end calls.
    "mindledger": {"domain", "projections", "adapters"},
    "cli": {"mindledger", "domain", "projections", "adapters", "service"},
    # The server is a front-end beside the CLI: it composes through cli.compose and calls the
    # same use cases (and the same JSON builders) the commands call.
    "service": {"mindledger", "domain", "projections", "adapters", "cli"},
}
# The command line reaches the server package only from the commands that start it, and only
# lazily (inside the command), so no other command pays for importing the HTTP stack.
CLI_MAY_IMPORT_SERVICE = {
    "cli/serve_cmds.py",
    "cli/mcp_cmds.py",
    "cli/web_cmds.py",
}


def layer_of(module: str) -> str | None:
    """The layer a module name belongs to (`mindledger.domain.x` -> `domain`, `mindledger.forget`
    -> the floor `mindledger`; a bare `domain.x` -> `domain` too, so neither form dodges a rule)."""
    parts = module.split(".")
    if parts[0] == "mindledger":
        return parts[1] if len(parts) > 1 and parts[1] in OURS else "mindledger"
    return parts[0] if parts[0] in OURS else None


def files_of(layer: str) -> list[Path]:
    """A layer's own files (the floor's: mindledger/*.py, not the folders linked under it)."""
    if layer == "mindledger":
        return sorted((REPO / "mindledger").glob("*.py"))
    return sorted((REPO / layer).rglob("*.py"))


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            if node.module == "mindledger":
                names |= {f"mindledger.{a.name}" for a in node.names}
    return {layer for name in names if (layer := layer_of(name)) in OURS}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_the_layers_inside_it(layer: str) -> None:
    offenders = {
        str(p.relative_to(REPO)): sorted(imported_packages(p) - ALLOWED[layer] - {layer})
        for p in files_of(layer)
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
            if "service" not in {layer_of(n) for n in names}:
                continue
            rel = str(p.relative_to(REPO))
            if rel not in CLI_MAY_IMPORT_SERVICE or id(node) in top:
                offenders.append(rel)

    assert offenders == []


def test_nothing_imports_litellm_at_module_level() -> None:
    top_level = [
        str(p.relative_to(REPO))
        for layer in OURS
        for p in files_of(layer)
        for node in ast.parse(p.read_text()).body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and "litellm"
        in (getattr(node, "module", None) or "") + ",".join(a.name for a in node.names)
    ]

    assert top_level == []


def test_our_code_is_imported_only_as_mindledger() -> None:
    bare = [
        f"{p.relative_to(REPO)}:{node.lineno}"
        for folder in (*OURS, "tests", "bench", "scripts")
        for p in files_of(folder)
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        and getattr(node, "level", 0) == 0
        and any(
            name.split(".")[0] in OURS - {"mindledger"}
            for name in [getattr(node, "module", None) or ""]
            + ([a.name for a in node.names] if isinstance(node, ast.Import) else [])
        )
    ]

    assert bare == []


def test_only_the_command_line_imports_click() -> None:
    offenders = [
        str(p.relative_to(REPO))
        for layer in OURS - {"cli"}
        for p in files_of(layer)
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        and "click"
        in {(getattr(node, "module", None) or "").split(".")[0]}
        | {a.name.split(".")[0] for a in node.names}
    ]

    assert offenders == []
