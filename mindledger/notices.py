"""Warnings the floor gives while a use case goes on (an unfinished forget it cannot finish, a
home file that redirects a provider key): one line each, to standard error, made safe for a
terminal. A front-end that has its own channel (a server's log) sets `notice_sink`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextvars import ContextVar

from mindledger.safe_text import for_terminal


def _to_stderr(line: str) -> None:
    print(for_terminal(line), file=sys.stderr, flush=True)


notice_sink: ContextVar[Callable[[str], None]] = ContextVar("notice_sink", default=_to_stderr)


def warn(message: str) -> None:
    """Give one `Warning: ...` line to whoever listens (standard error by default)."""
    notice_sink.get()(f"Warning: {message}")


def say(message: str) -> None:
    """Give one line of what the floor is doing (waiting, not failing) to whoever listens."""
    notice_sink.get()(message)
