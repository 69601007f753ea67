"""The architecture as a test: dependencies point inward only."""

from __future__ import annotations

import ast
import re
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
    # The front-ends: the floor, and the domain's values and errors (checked more closely below).
    "cli": {"mindledger", "domain"},
    "service": {"mindledger", "domain"},
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


# -- the floor's rules: front-ends import the floor, their own folder, the domain's values -------

FRONT_ENDS = ("cli", "service")
# Domain modules that run use cases (the application, its unit of work, the turn and ask
# services, the commands): only the floor calls them.
DOMAIN_USE_CASES = {
    "application",
    "changes",
    "commands",
    "turns",
    "knowledge_ask",
    "foreign_import",
    "foreign_apply",
    "turn_effects",
}


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports, at any depth (inside functions too), with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def refused_for_front_end(own: str, module: str) -> bool:
    """Whether a front-end (`own`) may not import `module` (checked in both import forms)."""
    parts = module.split(".")
    if parts[0] in OURS - {"mindledger"}:  # a bare name: never (and banned anyway)
        return True
    if parts[0] != "mindledger" or len(parts) < 2:
        return False
    layer = parts[1]
    if layer in ("projections", "adapters") or (layer in FRONT_ENDS and layer != own):
        return True
    return layer == "domain" and len(parts) > 2 and parts[2] in DOMAIN_USE_CASES


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_front_end_imports_only_the_floor_its_own_folder_and_domain_values(
    front_end: str,
) -> None:
    offenders = sorted(
        f"{p.relative_to(REPO)}:{line} {module}"
        for p in files_of(front_end)
        for line, module in imports_of(p)
        if refused_for_front_end(front_end, module)
    )

    assert offenders == []


def test_no_import_circle_between_folders() -> None:
    import networkx as nx

    graph = nx.DiGraph()
    for layer in OURS:
        for p in files_of(layer):
            for _, module in imports_of(p):
                target = layer_of(module)
                if target is not None and target != layer:
                    graph.add_edge(layer, target)

    assert list(nx.simple_cycles(graph)) == []


SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|CREATE\s+(TABLE|VIEW|INDEX)|DELETE\s+FROM|UPDATE\s+\w+\s+SET)\b",
    re.I | re.S,
)


def test_no_sql_outside_the_projections_and_adapters() -> None:
    offenders = []
    for layer in ("domain", "mindledger", *FRONT_ENDS):
        for p in files_of(layer):
            tree = ast.parse(p.read_text())
            docstrings = {
                id(n.body[0].value)
                for n in ast.walk(tree)
                if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
                and n.body
                and isinstance(n.body[0], ast.Expr)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docstrings
                    and "mind query" not in node.value  # an example in a command's help
                    and SQL.search(node.value)
                ):
                    offenders.append(f"{p.relative_to(REPO)}:{node.lineno}")

    assert offenders == []


# -- the floor's public surface: what a front-end may import of the floor ---------------------

# Modules a front-end may import anything from: the application and its results and errors
# (`mindledger.__all__` is drawn from these), the rules every front-end reads, the progress
# callable's type, and the floor's services that are no use case: the home a front-end opens
# the floor on and closes with (`compose`: Home, command_scope), one error line per failure
# (`error_report`), text made safe for a terminal or JSON (`safe_text`), and the server-file
# protocol the command line and the server share (`server_files`), and the web page's read
# session (`web_reads`: the page's own views over the read model, opened per request), and a
# client's request as the retry memory takes it and whether a failure is worth retrying
# (`turn_attempts`).
PUBLIC_MODULES = {
    "mindledger",
    "mindledger.startup_env",  # the environment `mind` started with (cli/main.py, first)
    "mindledger.application",
    "mindledger.async_floor",
    "mindledger.results",
    "mindledger.results_ledger",
    "mindledger.results_listings",
    "mindledger.results_files",
    "mindledger.errors",
    "mindledger.rules",
    "mindledger.progress",
    "mindledger.error_report",
    "mindledger.safe_text",
    "mindledger.server_files",
    "mindledger.web_reads",
    "mindledger.turn_attempts",
}
# Single names of other floor modules: vocabularies that click's choices and the OpenAPI
# document read from their one source, the server process's background warm-up and its cap
# on malloc arenas.
PUBLIC_NAMES = {
    "mindledger.warmup.warm_model_client",
    "mindledger.memory_release.cap_arenas",
    "mindledger.compose.Home",
    "mindledger.compose.command_scope",
    "mindledger.ledger_reads.KINDS",
    "mindledger.turn_refs.TURN_REF",
    "mindledger.reports.REPORT_NAMES",
    "mindledger.graph.GRAPH_FORMATS",
    "mindledger.read_model_repair.READS",  # the use cases that write nothing (`cli.floor`)
    "mindledger.output_paths.names_standard_output",  # `--out /dev/stdout` printed as `-`
    "mindledger.identity_view.plain_sqlite_name",  # `mind mcp` names itself before the settings
    # `mind status` and `commitments` from the read model's summary, before the floor loads.
    "mindledger.quick_reads.quick_status",
    "mindledger.quick_reads.quick_commitments",
    "mindledger.quick_reads.quick_recall",
    "mindledger.compose.default_home",
    # A server's request keeps the warnings its use case gave, for its answer (service/app.py).
    "mindledger.notices.heard",
}


def floor_imports(path: Path) -> list[tuple[int, str]]:
    """What a file imports of the floor's own modules (mindledger/*.py), at any depth, as
    `module` or `module.name`: every name of a `from` import is one entry."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return [
        (line, name)
        for line, name in found
        if name.startswith("mindledger") and layer_of(name) == "mindledger"
    ]


def public(name: str) -> bool:
    """Whether a front-end may import `name` (`from mindledger import x`: only what
    `mindledger.__all__` exports, so a floor module cannot come in as a name)."""
    import mindledger

    module, _, last = name.rpartition(".")
    if name in PUBLIC_MODULES:
        return True
    if module == "mindledger":
        return last in mindledger.__all__
    return name in PUBLIC_MODULES or module in PUBLIC_MODULES or name in PUBLIC_NAMES


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_front_end_imports_only_the_floor_s_public_surface(front_end: str) -> None:
    offenders = sorted(
        f"{p.relative_to(REPO)}:{line} {name}"
        for p in files_of(front_end)
        for line, name in floor_imports(p)
        if not public(name)
    )

    assert offenders == []


def test_no_public_name_is_also_a_floor_module() -> None:
    # Once `mindledger.doctor` (a module) is imported, the package's attribute `doctor` is
    # that module, not a function `__getattr__` would have given: such a name breaks at random.
    import mindledger

    modules = {p.stem for p in (REPO / "mindledger").glob("*.py")}

    assert sorted(set(mindledger.__all__) & modules) == []
