"""`mind NAME` loads only NAME's command module (`cli.group.command_tree`); the map it uses
names each module's commands exactly."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

import click
import pytest

from mindledger.cli.group import COMMAND_MODULES, _command_named
from mindledger.cli.main import mind
from tests.conftest import REPO


@pytest.mark.parametrize("module", sorted(COMMAND_MODULES))
def test_each_command_module_adds_the_commands_the_map_names(module: str) -> None:
    group = click.Group()

    import_module(f"mindledger.cli.{module}").register(group)

    assert sorted(group.commands) == sorted(COMMAND_MODULES[module])


def test_the_map_covers_the_whole_tree() -> None:
    assert sorted(mind.commands) == sorted(n for ns in COMMAND_MODULES.values() for n in ns)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["commitments"], "commitments"),
        (["--home", "/tmp/x", "status", "--json"], "status"),
        (["--home=/tmp/x", "recall", "report"], "recall"),
        (["--help"], None),
        (["--version"], None),
        ([], None),
        (["comitments"], None),  # a typo: the whole tree, for click's suggestion
        (["--home"], None),
    ],
)
def test_the_command_is_found_after_the_groups_own_home(argv: list[str], named: str) -> None:
    assert _command_named(argv) == named


def test_a_command_run_imports_only_its_own_module() -> None:
    probe = (
        "import sys; from mindledger.cli.group import command_tree\n"
        "tree = command_tree(['--home', '/nowhere', 'commitments', '--json'])\n"
        "print(sorted(tree.commands), 'mindledger.cli.turn_cmds' in sys.modules)\n"
    )

    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120
    )

    assert result.stdout.split("]")[0] + "]" == "['close', 'commit', 'commitments']"
    assert result.stdout.strip().endswith("False"), result.stderr


def test_every_command_module_is_in_the_map() -> None:
    modules = {p.stem for p in (REPO / "cli").glob("*.py") if "\ndef register(" in p.read_text()}

    assert modules == set(COMMAND_MODULES)
