"""Every public `MindLedger` method (the list the async twins are made from) has a unit test:
one marked `@pytest.mark.floor("method", ...)` in tests/unit. A new method without one fails
here, by name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mindledger.async_floor import public_methods

UNIT = Path(__file__).resolve().parent


def covered() -> dict[str, list[str]]:
    """Method -> the unit tests whose `floor` mark names it (read from the source, so no test
    module needs importing)."""
    found: dict[str, list[str]] = {}
    for path in sorted(UNIT.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and isinstance(decorator.func, ast.Attribute)
                    and decorator.func.attr == "floor"
                ):
                    for arg in decorator.args:
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                            found.setdefault(arg.value, []).append(f"{path.name}::{node.name}")
    return found


COVERED = covered()


@pytest.mark.parametrize("method", public_methods())
def test_every_public_method_has_a_unit_test(method: str) -> None:
    assert COVERED.get(method), f"no unit test is marked @pytest.mark.floor({method!r})"


def test_every_marked_name_is_a_public_method() -> None:
    assert sorted(set(COVERED) - set(public_methods())) == []
