"""How to open the SQLite ledger file, including from a folder this process cannot write.

A ledger in WAL mode needs its `-wal` and `-shm` files, which SQLite creates next to it; in a
read-only folder (a read-only mount, another user's home) it cannot, and even a read failed
("attempt to write a readonly database"). There the file is opened read-only, and when it has
no write-ahead log with content, as immutable: nothing is then waiting to be checkpointed, and
no process can write a folder nobody may write to, so reads see every committed event.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote


def folder_is_writable(path: Path) -> bool:
    """Whether this process may create files next to `path` and write `path` itself.

    `os.access` asks the kernel with this process's credentials, so root with its usual
    capabilities counts as writable (it is), and a read-only mount or immutable file does not."""
    return os.access(path.parent, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def sqlite_location(path: Path) -> str:
    """The name to open the ledger with for writing (a URI: SQLite is opened with uri=True):
    its path, or in a read-only folder a read-only URI, so reads still work."""
    if folder_is_writable(path):
        return str(path)
    return read_only_uri(path)


def read_only_uri(path: Path) -> str:
    """A read-only SQLite URI for the ledger; immutable when its folder cannot be written and
    its write-ahead log holds nothing (SQLite could not create the `-shm` index otherwise)."""
    uri = f"file:{quote(str(path))}?mode=ro"
    if folder_is_writable(path):
        return uri
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    if wal_bytes and shm.exists():
        return uri  # SQLite reads the log through the existing index
    return uri if wal_bytes else uri + "&immutable=1"
