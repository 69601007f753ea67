"""Opening a ledger export for reading: a regular file, or a FIFO another program writes it
into (adapters/export_check.py reads it)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO

from mindledger.domain.errors import MindError

# Bytes read at once: with the default 8 KiB, reading the lines was a tenth of the integrity
# check's time.
READ_BUFFER = 1024 * 1024


def open_export(path: Path, waiting: Callable[[], None] | None = None) -> IO[bytes]:
    """The file opened for reading: a regular file, or a FIFO (a pipe another program writes
    it into); anything else (a device that never ends, a folder) is refused before it is
    opened. A FIFO nobody writes to yet is waited for, after `waiting()` is called once."""
    try:
        found = os.stat(path)
        if stat.S_ISFIFO(found.st_mode):
            return _opened_fifo(path, waiting)
        if not stat.S_ISREG(found.st_mode):
            raise MindError(f"{path} is not a regular file; give a ledger export (.jsonl)")
        handle = open(path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 (the caller closes it)
    except OSError as e:
        raise MindError(f"cannot read {path}: {e.strerror or e}") from None
    if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # replaced since it was looked at
        handle.close()
        raise MindError(f"{path} is not a regular file; give a ledger export (.jsonl)")
    return handle


def _opened_fifo(path: Path, waiting: Callable[[], None] | None) -> IO[bytes]:
    """Open the FIFO without blocking, then wait for its writer's first bytes (or its close):
    a blocking open would hang with no word, and reading before any writer came would see an
    empty file. Ctrl-C stops the wait."""
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        if not poll.poll(0) and waiting is not None:  # nothing written yet: said once
            waiting()
        poll.poll()  # the first bytes, or a writer that came and went (POLLHUP)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb", buffering=READ_BUFFER)
