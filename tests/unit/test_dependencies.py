"""Every dependency in pyproject.toml says why it is there."""

from __future__ import annotations

import tomllib

from tests.conftest import REPO


def _dependency_lines() -> list[tuple[str, str]]:
    """(requirement, the line just above it) for every requirement in the dependency lists."""
    lines = (REPO / "pyproject.toml").read_text().splitlines()
    pairs, inside = [], False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped in ("dependencies = [", "dev = ["):
            inside = True
        elif stripped == "]":
            inside = False
        elif inside and stripped.startswith('"'):
            pairs.append((stripped, lines[i - 1].strip()))
    return pairs


def test_every_dependency_has_a_reason_comment_above_it() -> None:
    pairs = _dependency_lines()

    unexplained = [req for req, above in pairs if not above.startswith("#")]

    assert len(pairs) >= 15
    assert unexplained == []


def test_the_reason_scan_sees_every_declared_dependency() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = len(project["dependencies"]) + len(project["optional-dependencies"]["dev"])

    assert len(_dependency_lines()) == declared
