"""Whether a failure was a full disk (or the process's file size limit), so that every front-end
says so in one line instead of "unexpected failure" or "not a readable ledger".

The ledger and key store are SQLite files: on a full disk SQLite says "database or disk is full"
when a write fails, but only "disk I/O error" when it cannot grow its shared-memory index, which
a WAL database needs even to be read. That one is taken for a full disk only when the disk
holding the home has (almost) no space left or a file size limit is set on this process.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

DISK_FULL_MESSAGE = (
    "no space left to write (the disk is full, or the file size limit was reached): "
    "free some space, then run the command again"
)
_ERRNOS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_WORDS = (
    "database or disk is full",  # SQLite's SQLITE_FULL
    "no space left on device",  # ENOSPC, as DuckDB and the OS word it
    "file too large",  # EFBIG: past RLIMIT_FSIZE (`ulimit -f`)
    "disk quota exceeded",  # EDQUOT
)
_UNSPECIFIC = "disk i/o error"  # SQLite's SQLITE_IOERR: a full disk among other causes
NEARLY_FULL = 1 << 20  # bytes: less than this left is too little for SQLite's index and log


def is_disk_full(chain: Sequence[BaseException], home: Path | None) -> bool:
    """Whether any error in `chain` (an error and its causes) says the disk was full."""
    for e in chain:
        if isinstance(e, OSError) and e.errno in _ERRNOS:
            return True
        text = str(e).lower()
        if any(words in text for words in _WORDS):
            return True
        if _UNSPECIFIC in text and _no_room(home):
            return True
    return False


def _no_room(home: Path | None) -> bool:
    """Whether this process may be out of room: a file size limit, or a nearly full disk."""
    try:
        import resource
    except ImportError:  # not a Unix: no file size limit to read
        pass
    else:
        if resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY:
            return True
    if home is None:
        return False
    try:
        stat = os.statvfs(home)
    except (OSError, AttributeError):  # gone, or a system without statvfs
        return False
    return stat.f_bavail * stat.f_frsize < NEARLY_FULL
