"""The `mind` command group: options shared by every command, and turning errors into one line.

Imported by `cli.main.main` only when the call does not go to a running server (`cli.fast_path`):
it loads the whole command tree."""

from __future__ import annotations

from contextlib import ExitStack
from importlib import import_module
from pathlib import Path
from typing import Any

import click

from mindledger.cli.arguments import GivenPath, one_line_refusal, refuse_undecodable_arguments
from mindledger.cli.floor import last_write
from mindledger.cli.options import HOME_HELP, share_options
from mindledger.cli.output import OutputFailedError, error_text
from mindledger.cli.render import recorded_words, unchanged_words
from mindledger.cli.request_words import as_flags
from mindledger.compose import Home, command_scope


class ClickOutputFailed(click.ClickException):
    """An `OutputFailedError` as click reports its own errors (one line, its exit status)."""

    def __init__(self, failed: OutputFailedError) -> None:
        super().__init__(failed.format_message())
        self.failed = failed

    def show(self, file: Any = None) -> None:
        self.failed.show(file)


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
            raise ClickOutputFailed(e.saying(also) if also else e) from None
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
    type=GivenPath(file_okay=False, path_type=Path),
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


# Each command module and the commands it adds to `mind` (a test checks this against the modules).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "ledger_cmds": ("init", "status", "log", "verify"),
    "model_cmds": ("model",),
    "commitment_cmds": ("commit", "close", "commitments"),
    "concept_cmds": ("concept", "concepts"),
    "thread_cmds": ("thread", "threads", "tick"),
    "identity_cmds": ("identity",),
    "config_cmds": ("config",),
    "projection_cmds": ("project", "replay"),
    "query_cmds": ("query", "report", "export"),
    "graph_cmds": ("graph",),
    "turn_cmds": ("turn", "chat"),
    "recall_cmds": ("recall",),
    "import_cmds": ("import",),
    "knowledge_cmds": ("remember", "ask", "knowledge", "approve", "discard"),
    "forget_cmds": ("forget",),
    "backup_cmds": ("backup",),
    "mcp_cmds": ("mcp",),
    "serve_cmds": ("serve", "server"),
    "web_cmds": ("open",),
    "doctor_cmds": ("doctor",),
}
_loaded: set[str] = set()


def command_tree(argv: list[str] | None = None) -> click.Group:
    """The `mind` group, with the command `argv` runs (`mind [--home DIR] NAME ...`) or, for
    anything else (`--help`, no command, a name we do not know) and for `argv` None, every
    command. A process that runs one command imports only that command's module: the whole
    tree was ~35 ms of CPU on every command, more than a command's own module costs."""
    name = _command_named(argv) if argv is not None else None
    wanted = [m for m, names in COMMAND_MODULES.items() if name is None or name in names]
    for module in wanted:
        if module in _loaded:
            continue
        before = set(mind.commands)
        import_module(f"mindledger.cli.{module}").register(mind)
        _loaded.add(module)
        added = [mind.commands[n] for n in sorted(set(mind.commands) - before)]
        for command in added:
            refuse_undecodable_arguments(command)
        share_options(mind, added)
    return mind


def _command_named(argv: list[str]) -> str | None:
    """The command `argv` names after the group's own `--home`, when it is one we know."""
    rest = list(argv)
    while rest and rest[0].startswith("--home"):
        rest = rest[1:] if "=" in rest[0] else rest[2:]
    if not rest or not any(rest[0] in names for names in COMMAND_MODULES.values()):
        return None
    return rest[0]


# The group's own checks and shared options, once; each command's as its module is loaded.
refuse_undecodable_arguments(mind)
share_options(mind, [])  # help examples printed as written
