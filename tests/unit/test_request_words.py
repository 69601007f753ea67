"""The floor names an argument by its request word in backticks; the command line shows the
flag or argument its command takes for it (one mapping, `cli.request_words`), a program sees
the word and the error's `param`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import pytest

from mindledger.cli.request_words import as_flags, recording
from tests.conftest import Result


@click.group()
@click.option("--home")
def group(home: str | None) -> None:
    """A group like `mind`."""


@group.command()
@click.argument("folder")
@click.option("--into", "target")
@click.option("--api-base")
def command(folder: str, target: str | None, api_base: str | None) -> None:
    """A command whose errors the group words."""
    ctx = click.get_current_context()
    raise click.ClickException(
        as_flags(
            "`folder` is a file; `target` exists; `api_base` (argument) = 'x' is not valid; "
            "`home` is fine; `mind log` and `unknown` stay",
            ctx,
        )
    )


assert command.callback is not None
command.callback = recording(command.callback)


def test_request_words_become_the_command_s_own_flags_and_arguments() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(group, ["command", "here"])

    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: FOLDER is a file; --into exists; --api-base (flag) = 'x' is not valid; "
        "--home is fine; `mind log` and `unknown` stay"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["concept", "bind", "project.alpha"],
            "Error: give exactly one of --commitment, --thread or --event",
        ),
        (
            ["forget", "--before", "2999-01-01T00:00:00Z", "--yes"],
            "Error: --before 2999-01-01T00:00:00Z is in the future",
        ),
    ],
)
def test_the_command_line_shows_a_floor_error_with_its_flags(
    cli: Callable[..., Result], mind_home: Path, args: list[str], line: str
) -> None:
    cli("concept", "define", "project.alpha", "The billing rewrite")

    result = cli(*args)

    assert result.exit_code == 1
    assert result.stderr.startswith(line) and "`" not in result.stderr.splitlines()[0][:60]
