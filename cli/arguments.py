"""Command-line text that is not UTF-8: refused once, for every command, naming the argument.

On POSIX, Python decodes argv with `surrogateescape`, so a byte like 0xFF arrives as the lone
surrogate U+DCFF. Such a string cannot be encoded again (SQLite, DuckDB, hashing and JSON all
raise), so it is refused before any command runs, whatever it was meant for.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from mindledger.domain.errors import InvalidInputError


class RefusedValueError(click.ClickException):
    """Raised when a value typed on the command line is refused (click's own checks of a path
    or a choice, a setting out of range): one line `Error: ...` and exit 2, as a usage error
    exits, but without the usage block, which says nothing about the value."""

    exit_code = 2


def one_line_refusal(e: click.BadParameter) -> RefusedValueError:
    """Click's refusal of a value (`Invalid value for 'FOLDER': ... is a file.`) as one line."""
    return RefusedValueError(e.format_message())


class GivenPath(click.Path):
    """A path typed on the command line; an empty one is refused (one line, exit 2) rather than
    taken as `.`: `mind backup ""` wrote a backup into the current folder, `mind export ""`
    its file there, `mind --home ""` looked for a mind there."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("it is empty; give a path (`.` for the current folder)", param, ctx)
        return super().convert(value, param, ctx)


class ExportFolder(GivenPath):
    """An export's FOLDER: one that is a file is click's refusal (one line, exit 2); a symbolic
    link, whatever it leads to (a file, a folder, nothing), is left to the floor, which refuses
    every link in its own words (naming it and where it leads, exit 1) before any work."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and os.path.islink(value):
            return Path(value)
        return super().convert(value, param, ctx)


def undecodable_part(value: str) -> str | None:
    """What in `value` is not UTF-8 (`byte 0xFF`), or None when all of it is."""
    for ch in value:
        if 0xDC80 <= ord(ch) <= 0xDCFF:
            return f"byte 0x{ord(ch) - 0xDC00:02X}"
        if 0xD800 <= ord(ch) <= 0xDFFF:  # any other lone surrogate cannot be encoded either
            return f"U+{ord(ch):04X}"
    return None


def _label(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        return f"option {max(param.opts, key=len)}"
    return f"argument {param.human_readable_name}"


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, str)]
    return []


def check_arguments(command: click.Command, values: dict[str, Any]) -> None:
    """Raise InvalidInputError when a text argument of `command` is not valid UTF-8.

    Paths are left alone: a file name need not be UTF-8 and the filesystem takes it as it is."""
    for param in command.params:
        if param.name is None or isinstance(param.type, (click.Path, click.File)):
            continue
        for text in _texts(values.get(param.name)):
            bad = undecodable_part(text)
            if bad is not None:
                raise InvalidInputError(
                    f"{_label(param)} is not valid UTF-8 ({bad}); pass it as UTF-8 text"
                )


def _checked(command: click.Command, callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        check_arguments(command, kwargs)
        return callback(*args, **kwargs)

    return run


def refuse_undecodable_arguments(command: click.Command) -> None:
    """Make `command` and every subcommand check their text arguments before running."""
    if command.callback is not None:
        command.callback = _checked(command, command.callback)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            refuse_undecodable_arguments(sub)
