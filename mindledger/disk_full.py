"""Whether a failure was a full disk (or the process's file size limit), so that every front-end
says so in one line instead of "unexpected failure" or "not a readable ledger": what filled,
where, and what to do (`disk_full_message`).

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

_ERRNOS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_WORDS = (
    "database or disk is full",  # SQLite's SQLITE_FULL
    "no space left on device",  # ENOSPC, as DuckDB and the OS word it
    "file too large",  # EFBIG: past RLIMIT_FSIZE (`ulimit -f`)
    "disk quota exceeded",  # EDQUOT
)
_UNSPECIFIC = "disk i/o error"  # SQLite's SQLITE_IOERR: a full disk among other causes
# What filled, by errno and by the words a library uses for it.
_LIMIT = "the file size limit was reached"
_DISK = "the disk is full"
_QUOTA = "the disk quota is used up"
_EITHER = "the disk is full, or the file size limit was reached"
_FIXES = {_LIMIT: "raise the limit (ulimit -f)", _QUOTA: "free some space or raise the quota"}
_SAID = {errno.ENOSPC: _DISK, errno.EFBIG: _LIMIT, errno.EDQUOT: _QUOTA}
_SAID_IN_WORDS = {
    "no space left on device": _DISK,
    "file too large": _LIMIT,
    "disk quota exceeded": _QUOTA,
}
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


def disk_full_message(
    chain: Sequence[BaseException],
    home: Path | None,
    where: str | None,
    kept: str | None,
    imported: str | None = None,
) -> str:
    """The one line for a full disk (`is_disk_full`): what filled, `where` (the home, or how a
    remote client knows it), and what to do; with `kept`, the turn that keeps a message
    recorded before the disk filled (`domain.turn_kept`): running it again asks again; with
    `imported`, what an import saved before it stopped ("1000 messages", `domain.import_kept`):
    running it again adds only the rest."""
    place = f" in {where}" if where else ""
    what = _what_filled(chain, home)
    fix = _FIXES.get(what, "free some space")
    then = f"{fix}, then run the command again"
    if kept:
        then = f"the message is kept as turn {kept}, unanswered; {fix}, then run it again"
    elif imported:
        then = (
            f"the import kept the {imported} it had saved; {fix}, then run the same import "
            "again (it adds only what is still missing)"
        )
    return f"no space left to write{place} ({what}): {then}"


def _what_filled(chain: Sequence[BaseException], home: Path | None) -> str:
    for e in chain:
        if isinstance(e, OSError) and e.errno in _SAID:
            return _SAID[e.errno]
        text = str(e).lower()
        for words, said in _SAID_IN_WORDS.items():
            if words in text:
                return said
    # SQLite's own words name no cause: the process's limit, or the disk, as they stand now.
    limited, nearly_full = _size_limited(), _nearly_full(home)
    if limited != nearly_full:
        return _LIMIT if limited else _DISK
    return _EITHER


def _size_limited() -> bool:
    try:
        import resource
    except ImportError:  # not a Unix: no file size limit to read
        return False
    return resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY


def _nearly_full(home: Path | None) -> bool:
    if home is None:
        return False
    try:
        stat = os.statvfs(home)
    except (OSError, AttributeError):  # gone, or a system without statvfs
        return False
    return stat.f_bavail * stat.f_frsize < NEARLY_FULL


def _no_room(home: Path | None) -> bool:
    """Whether this process may be out of room: a file size limit, or a nearly full disk."""
    return _size_limited() or _nearly_full(home)
