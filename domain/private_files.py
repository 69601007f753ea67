"""A mind's home is private to its owner: the folder is 0700 and every file in it 0600, whatever
the umask (a common umask of 022 made the ledger and the read models, the plain text of every
message, readable by every user of the machine).

This is the one module in `domain/` that touches files. It is here because every layer that
writes into a home must keep the same rule, and `projections/` may import only `domain/`; it is
standard library only, does nothing at import time and decides nothing but two modes, so the
domain stays free of storage choices.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700
SHARED_BITS = 0o077  # what the group and other users may do


def private_folder(path: Path) -> None:
    """Create the folder `path` as 0700 (missing parents with ordinary modes); a folder that
    already exists keeps its mode (it may be a place the user chose, like ~/backup)."""
    if path.is_dir():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=FOLDER_MODE)
    except FileExistsError:
        return  # made meanwhile by another process of ours, or a file: the caller finds out
    os.chmod(path, FOLDER_MODE)  # mkdir applies the umask, which could leave it narrower


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """An `opener` for `open()`: a file it creates is 0600 from the first byte (the umask can
    only take bits away from 0600)."""
    return os.open(path, flags, FILE_MODE)


def create_private_file(path: Path) -> None:
    """Make `path` an empty 0600 file if it does not exist (a database's file before the
    database library opens it: SQLite then gives its -wal, -shm and -journal the same mode)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))


def write_private_text(path: Path, text: str) -> None:
    """Write `text` to `path`, created 0600 (an existing file is made 0600 too)."""
    with open(path, "w", encoding="utf-8", opener=private_opener) as f:
        os.fchmod(f.fileno(), FILE_MODE)
        f.write(text)


def tighten(path: Path | str) -> None:
    """Take the group's and others' bits off a file a library made with the umask's mode
    (DuckDB makes its files and each new WAL so). Missing or not ours: left alone."""
    with contextlib.suppress(OSError):
        found = os.lstat(path)
        mode = stat.S_IMODE(found.st_mode)
        if mode & SHARED_BITS and not stat.S_ISLNK(found.st_mode):
            os.chmod(path, mode & ~SHARED_BITS)
