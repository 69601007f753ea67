"""Printing: JSON for programs, aligned text for people, and nothing a terminal would obey
(the rules are the floor's, `mindledger.safe_text`; this module only writes). Standard library
only: the fast path to a warm server prints through it (click's import was a fifth of that
client's own time); the command tree hands `OutputFailedError` to click (`cli.group`)."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator, Sequence
from typing import IO, Any

from mindledger.safe_text import configured_secrets, error_text, for_terminal, json_text, plain

__all__ = [
    "OutputFailedError",
    "configured_secrets",
    "echo",
    "emit_json",
    "error_text",
    "json_text",
    "plain",
    "table",
    "table_text",
    "write_out",
]


class OutputFailedError(Exception):
    """Raised when standard output cannot be written (a full disk, `> /dev/full`, a closed
    pipe): one line on stderr, exit 1. A closed pipe is the reader's choice (`mind log | head`)
    and says nothing, as Unix tools say nothing, unless the command `also` has something to
    tell (`mind turn`: the turn was recorded). Shown as click shows its own errors."""

    exit_code = 1

    def __init__(self, cause: OSError, also: str = "") -> None:
        self.cause, self.also = cause, also
        self.message = f"cannot write the output ({cause.strerror or cause}){also}"
        super().__init__(self.message)

    def format_message(self) -> str:
        """The line's text after `Error: `."""
        return self.message

    @property
    def quiet(self) -> bool:
        """A closed pipe with nothing else to say."""
        return self.cause.errno == errno.EPIPE and not self.also

    def saying(self, also: str) -> OutputFailedError:
        """The same failure, telling what was done regardless."""
        return OutputFailedError(self.cause, also)

    def show(self, file: IO[Any] | None = None) -> None:
        """`Error: ...` on stderr (or `file`), unless quiet."""
        if not self.quiet:
            _write(f"Error: {self.format_message()}", True, file or sys.stderr)


@contextlib.contextmanager
def writing_stdout() -> Iterator[None]:
    """Turn a failed write to standard output into OutputFailedError, and point the process's
    stdout at /dev/null so that what is left in its buffer cannot fail again at exit. A
    process started with stdout closed (`>&-`: Python's `sys.stdout` is None, and click would
    print nothing without a word) fails the same way."""
    if sys.stdout is None:
        raise OutputFailedError(OSError(errno.EBADF, "standard output is closed"))
    try:
        yield
    except OSError as e:
        abandon_stdout()
        raise OutputFailedError(e) from None


def abandon_stdout() -> None:
    """Send whatever is still to be written to stdout to /dev/null (nothing for a stream that
    is not a real file, as a test's capture is)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def _write(text: str | None, nl: bool, file: IO[Any] | None) -> None:
    """What `click.echo` does with text: write it and a newline, then flush."""
    if file is None:
        return  # a stream closed at start (stderr `2>&-`): nothing to write to
    out = (text or "") + ("\n" if nl else "")
    if out:
        file.write(out)
    file.flush()


def echo(message: Any = None, nl: bool = True, err: bool = False) -> None:
    """Print a line made safe for a terminal (`for_terminal`), as `click.echo` would."""
    text = None if message is None else for_terminal(str(message))
    if err:
        _write(text, nl, sys.stderr)
        return
    with writing_stdout():
        _write(text, nl, sys.stdout)


def path_text(path: Any) -> str:
    """A path for a line of output: as click shows a file name, with a line break or a tab in
    it written out (`\\n`), as an error line writes it, so the line stays one line."""
    import click

    shown = click.format_filename(path)
    return shown.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")


def write_out(text: str, nl: bool = True) -> None:
    """Print `text` as it is (data for a pipe, or text already made safe)."""
    with writing_stdout():
        _write(text, nl, sys.stdout)


def emit_json(data: Any) -> None:
    """Print one JSON document (`json_text`); a floor result as its JSON dump."""
    dump = getattr(data, "model_dump", None)  # duck-typed: this module never imports pydantic
    write_out(json_text(dump(mode="json") if dump is not None else data))


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], empty: str) -> None:
    """Print rows as a plain aligned table, or `empty` when there are none."""
    write_out(table_text(rows, columns, empty), nl=False)


def table_text(rows: Sequence[dict[str, Any]], columns: Sequence[str], empty: str) -> str:
    """Rows as a plain aligned table, terminal-safe, each line ending in a newline."""
    if not rows:
        return for_terminal(empty) + "\n"
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "".join(for_terminal(line.rstrip()) + "\n" for line in lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value) or "-"
    text = for_terminal(str(value).replace("\n", " "))
    return text if len(text) <= 60 else text[:57] + "..."
