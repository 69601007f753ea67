"""The `mind` command group: options shared by every command, and turning errors into one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from eventsourcing.persistence import PersistenceError

from cli.compose import Home
from domain.errors import MindError


class MindGroup(click.Group):
    """A group whose commands report MindError as one `Error: ...` line with exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MindError as e:
            raise click.ClickException(str(e)) from None
        except PersistenceError as e:
            raise click.ClickException(f"ledger error: {e}") from None


@click.group(cls=MindGroup)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="The mind's folder (default: $MIND_HOME, else ~/.local/share/mindledger).",
)
@click.version_option(package_name="mindledger")
@click.pass_context
def mind(ctx: click.Context, home: Path | None) -> None:
    """A persistent, inspectable mind kept as a hash-linked event ledger.

    Every command works on one home folder holding the ledger, the read models and config.
    Set MIND_NOW (ISO-8601, UTC) to fix the time that commands record. Settings come from
    flags, then MIND_* variables, then MIND_HOME/.env, then config.json (`mind config show`).

    Example:

        mind init --name Echo
        mind commit "Send the weekly report on Friday"
        mind commitments
        mind verify
    """
    ctx.obj = Home.from_option(home)
    _ = ctx.obj.loaded  # every setting is checked here: a bad value stops any command at once


def _register() -> None:
    from cli import (
        commitment_cmds,
        concept_cmds,
        config_cmds,
        graph_cmds,
        identity_cmds,
        import_cmds,
        ledger_cmds,
        model_cmds,
        projection_cmds,
        query_cmds,
        recall_cmds,
        thread_cmds,
        turn_cmds,
    )

    for module in (
        ledger_cmds,
        model_cmds,
        commitment_cmds,
        concept_cmds,
        thread_cmds,
        identity_cmds,
        config_cmds,
        projection_cmds,
        query_cmds,
        graph_cmds,
        turn_cmds,
        recall_cmds,
        import_cmds,
    ):
        module.register(mind)


_register()


def main() -> None:
    """Console-script entry point."""
    mind(prog_name="mind")
