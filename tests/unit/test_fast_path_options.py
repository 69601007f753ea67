"""The fast path's option table is the click commands' own: it cannot drift from them."""

from __future__ import annotations

import click
import pytest

from mindledger.cli import fast_path
from mindledger.cli.main import mind

# Options the fast path leaves to click on purpose (the call then runs in-process).
LEFT_TO_CLICK = {"--help", "--as-of"}


def options_of(command: click.Command) -> dict[str, bool]:
    """Each long option of a command -> whether it takes a value."""
    return {
        name: not option.is_flag
        for option in command.params
        if isinstance(option, click.Option)
        for name in option.opts
        if name.startswith("--")
    }


@pytest.mark.parametrize(
    ("name", "own"), [("turn", fast_path.TURN_OPTIONS), ("recall", fast_path.RECALL_OPTIONS)]
)
def test_the_fast_path_knows_each_option_of_the_command_as_click_does(
    name: str, own: dict[str, bool]
) -> None:
    command = mind.commands[name]
    clicked = {k: v for k, v in options_of(command).items() if k not in LEFT_TO_CLICK}

    assert {**own, **fast_path.COMMON_OPTIONS} == clicked


@pytest.mark.parametrize("name", ["turn", "recall"])
def test_the_fast_path_budget_rule_is_the_commands(name: str) -> None:
    [budget] = [p for p in mind.commands[name].params if p.name == "budget"]

    assert budget.default == fast_path.DEFAULT_BUDGET
    assert isinstance(budget.type, click.IntRange)
    assert budget.type.min == fast_path.MIN_BUDGET[name]
