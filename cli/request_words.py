"""The floor's error messages name an argument by its request word in backticks (`before`,
`out`, `folder`): a Python caller's parameter, an HTTP client's JSON field. The command line
shows each as what its command takes for it (`--before`, `--out`, FOLDER). One mapping for
every command, read from the command's own parameters by name, so none rewords its own."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

_COMMAND = "mindledger.command"  # the command that ran, kept in the contexts' shared `meta`
# A request word, and the source a setting given as one is described by (`api_base` (argument)).
_WORD = re.compile(r"`([a-z][a-z0-9_]*)`( \(argument\))?")


def recording(callback: F) -> F:
    """`callback` (a command's), noting its command as the one that ran (a group's runs
    first, the command's own last)."""

    @functools.wraps(callback)
    def call(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        ctx.meta[_COMMAND] = ctx.command
        return callback(*args, **kwargs)

    return call  # type: ignore[return-value]


def shown(param: click.Parameter) -> str:
    """How the command line names `param`: its long flag, else its first flag, else (an
    argument) its metavar (FOLDER)."""
    if isinstance(param, click.Option):
        return next((o for o in param.opts if o.startswith("--")), param.opts[0])
    return param.human_readable_name


def as_flags(message: str, ctx: click.Context) -> str:
    """`message` with each request word a parameter of the command that ran (or of the `mind`
    group: `--home`) shown as the command line names it (a setting given as an argument: as a
    flag); other backticked words kept."""
    ran = ctx.meta.get(_COMMAND)
    commands = [c for c in (ran, ctx.find_root().command) if isinstance(c, click.Command)]
    names: dict[str, str] = {}
    for command in commands:
        for param in command.params:
            if param.name and param.expose_value:
                names.setdefault(param.name, shown(param))
    names.setdefault("home", "--home")  # every command takes --home (not exposed: see options)

    def flag(m: re.Match[str]) -> str:
        if m[1] not in names:
            return m[0]
        return names[m[1]] + (" (flag)" if m[2] else "")

    return _WORD.sub(flag, message)
