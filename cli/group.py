"""The `mind` command group: options shared by every command, and turning errors into one line.

Imported by `cli.main.main` only when the call does not go to a running server (`cli.fast_path`):
it loads the whole command tree."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from mindledger.cli.arguments import one_line_refusal, refuse_undecodable_arguments
from mindledger.cli.floor import last_write
from mindledger.cli.options import HOME_HELP, share_options
from mindledger.cli.output import OutputFailedError, error_text
from mindledger.cli.render import recorded_words, unchanged_words
from mindledger.cli.request_words import as_flags
from mindledger.compose import Home, command_scope


class MindGroup(click.Group):
    """A group whose commands report any failure as one `Error: ...` line with exit 1: our words
    and at most a cause's first line (`mindledger.error_report`; the traceback in the home's
    errors log), secrets redacted, nothing a terminal would obey (`cli.output.error_text`)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise  # a group named alone: its help, printed as the help is (not one line)
        except OutputFailedError as e:  # stdout failed: say what was recorded all the same
            also = "" if e.also else recorded_words(last_write.get())
            if not also and not e.quiet:  # a closed pipe stays quiet when nothing was recorded
                also = unchanged_words(last_write.get())
            raise (e.saying(also) if also else e) from None
        except click.BadParameter as e:
            # A value refused (a FOLDER that is a file, an unknown KEY): one line, exit 2. A
            # missing argument is a syntax error and keeps click's usage block.
            if isinstance(e, click.MissingParameter):
                setattr(e, "message", error_text(e.message, _home(ctx)))  # noqa: B010
                raise
            raise one_line_refusal(e) from None
        except click.ClickException as e:  # usage errors quote what was typed
            setattr(e, "message", error_text(e.message, _home(ctx)))  # noqa: B010 (typed Final)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except Exception as e:  # the process boundary: a MindError, or anything unforeseen
            from mindledger.error_report import failure_message  # (its imports: on failure)

            home = _home(ctx)
            message = as_flags(failure_message(e, home), ctx)
            raise click.ClickException(error_text(message, home)) from None

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """The group's own options (`mind --home FILE status`) refused in one line too."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.BadParameter as e:
            if isinstance(e, click.MissingParameter):
                raise
            raise one_line_refusal(e) from None


def _home(ctx: click.Context) -> Path | None:
    """The home the command works on, once the group has read its options."""
    return ctx.obj.path if isinstance(ctx.obj, Home) else None


@click.group(cls=MindGroup)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help=HOME_HELP,
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
    ctx.obj = Home.from_option(home, "--home")
    last_write.set(None)  # this command's writes (a test runs many in one process)
    opened = ExitStack()  # what the command opens is closed when it ends
    opened.callback(command_scope.set, None)
    command_scope.set(opened)
    ctx.call_on_close(opened.close)
    if ctx.invoked_subcommand != "doctor":  # doctor reports a bad setting among its checks
        _ = ctx.obj.loaded  # every setting is checked here: a bad value stops any command at once


def _register() -> None:
    from mindledger.cli import (
        backup_cmds,
        commitment_cmds,
        concept_cmds,
        config_cmds,
        doctor_cmds,
        forget_cmds,
        graph_cmds,
        identity_cmds,
        import_cmds,
        knowledge_cmds,
        ledger_cmds,
        mcp_cmds,
        model_cmds,
        projection_cmds,
        query_cmds,
        recall_cmds,
        serve_cmds,
        thread_cmds,
        turn_cmds,
        web_cmds,
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
        knowledge_cmds,
        forget_cmds,
        backup_cmds,
        mcp_cmds,
        serve_cmds,
        web_cmds,
        doctor_cmds,
    ):
        module.register(mind)
    refuse_undecodable_arguments(mind)


_register()
share_options(mind)  # --home after any subcommand too; help examples printed as written
