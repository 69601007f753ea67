"""Warnings the floor gives while a use case goes on (an unfinished forget it cannot finish, a
home file that redirects a provider key, an optional part that is missing): one line each, to
standard error, made safe for a terminal. A front-end that has its own channel sets
`notice_sink`.

A server's warnings would stay in its log, where the user of a command it ran never looks: a
request's handler runs inside `heard()`, which also keeps the request's warnings for its
answer (the server sends them back and the command line prints them). A warning given once
per process (`warn_once`) is then given once per request too: each client hears it once.

A warning may quote what a dependency said (a broken package's import error, a provider's
failure), which may repeat a key: every line is redacted as a failure message is."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from mindledger.safe_text import for_terminal


def _to_stderr(line: str) -> None:
    # One line, as a server's client prints it (`cli.server_client.tell_warnings`): a line
    # break in what a warning quotes is written out as `\n`.
    print(for_terminal(line, keep="\t"), file=sys.stderr, flush=True)


notice_sink: ContextVar[Callable[[str], None]] = ContextVar("notice_sink", default=_to_stderr)


class _Request:
    """The warnings one request heard, in order, and the keys of those given once."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.once: set[str] = set()


_request: ContextVar[_Request | None] = ContextVar("notice_request", default=None)
_lock = threading.Lock()
_once: set[str] = set()  # the keys warned about in this process


@contextmanager
def heard() -> Iterator[list[str]]:
    """Keep the warnings given inside the block (and in the threads it hands its context to)
    in the list it yields, besides giving them as usual."""
    scope = _Request()
    token = _request.set(scope)
    try:
        yield scope.lines
    finally:
        _request.reset(token)


def _line(message: str) -> str:
    """The warning's line, with the environment's secrets (a home's .env keys are exported
    there for the providers: `provider_env`) and anything shaped like a key redacted."""
    from mindledger.domain.redaction import redact, secret_values  # on a warning only

    return redact(f"Warning: {message}", secret_values(os.environ.items()))


def warn(message: str) -> None:
    """Give one `Warning: ...` line to whoever listens (standard error by default)."""
    line = _line(message)
    scope = _request.get()
    if scope is not None:
        scope.lines.append(line)
    notice_sink.get()(line)


def warn_once(key: str, message: str) -> None:
    """`warn`, the first time in this process that `key` is warned about (and the first time
    in a request inside `heard`, for that request's answer)."""
    line = _line(message)
    scope = _request.get()
    with _lock:
        first = key not in _once
        _once.add(key)
        told = scope is None or key in scope.once
        if scope is not None:
            scope.once.add(key)
    if not told and scope is not None:
        scope.lines.append(line)
    if first:
        notice_sink.get()(line)


def say(message: str) -> None:
    """Give one line of what the floor is doing (waiting, not failing) to whoever listens."""
    notice_sink.get()(message)
