"""Copying a live SQLite database (the ledger, the key store) with SQLite's online backup API.

Never a file copy: a database in WAL mode is its file plus the committed pages still in its
`-wal`, and a copy of the files taken while a writer appends can be torn. The backup API copies
pages through SQLite, and this copy holds one read transaction on the source from before the
first page to after the last: every step reads the same snapshot, so the copy is the database
exactly as one instant left it, whatever is written meanwhile. (Without the held transaction
SQLite restarts the copy each time another process commits, which under steady writes may never
finish.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from mindledger.adapters.ledger_location import read_only_uri
from mindledger.adapters.sealing import key_ids
from mindledger.domain.errors import LedgerCorruptError
from mindledger.domain.private_files import create_private_file

STEP_PAGES = 1024  # pages per step (4 MiB at the default page size): a progress tick each


def page_count(path: Path) -> int:
    """How many pages `path` holds now (a progress bar's length; the copy may differ a little)."""
    con = sqlite3.connect(read_only_uri(path), uri=True)
    try:
        return int(con.execute("PRAGMA page_count").fetchone()[0])
    except sqlite3.DatabaseError as e:
        raise LedgerCorruptError(f"{path} is not a readable SQLite database ({e})") from None
    finally:
        con.close()


def copy_database(source: Path, target: Path, on_pages: Callable[[int], None]) -> int:
    """Copy `source` as one snapshot into `target` (a new file, created 0600); `on_pages(n)`
    after each step with the pages it copied. Returns the pages copied."""
    create_private_file(target)  # whatever the umask: a backup holds the mind's keys and words
    src = sqlite3.connect(read_only_uri(source), uri=True, isolation_level=None, timeout=30)
    dst = sqlite3.connect(target, isolation_level=None)
    done = 0

    def stepped(status: int, remaining: int, total: int) -> None:
        nonlocal done
        on_pages(total - remaining - done)
        done = total - remaining

    try:
        src.execute("BEGIN")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot starts here
        src.backup(dst, pages=STEP_PAGES, progress=stepped)
        src.execute("COMMIT")
        dst.execute("PRAGMA journal_mode=WAL")  # as every home's own files are
    except sqlite3.DatabaseError as e:
        failed = LedgerCorruptError(f"{source} could not be copied ({e})")
        # Only the copy is written: a full disk's line (`mindledger.disk_full`) names its place.
        failed.path = str(target)  # type: ignore[attr-defined]
        raise failed from None
    finally:
        src.close()
        dst.close()
    return done


def settle(path: Path) -> None:
    """Leave `path` alone on disk: its last connection, closing, checkpoints its WAL and
    removes the `-wal` and `-shm` files that reading it made."""
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA user_version").fetchone()
    finally:
        con.close()


def pending_forget_ids(key_store: Path) -> list[str]:
    """The forgets a key store notes as begun and not finished (their keys already gone)."""
    con = sqlite3.connect(read_only_uri(key_store), uri=True)
    try:
        return [str(r[0]) for r in con.execute("SELECT id FROM forgets")]
    except sqlite3.DatabaseError as e:
        raise LedgerCorruptError(f"{key_store} is not a readable key store ({e})") from None
    finally:
        con.close()


def named_key_ids(rows: Iterable[tuple[str | None, bytes | None]]) -> set[bytes]:
    """Every data key id the sealed fields of these (topic, stored state) rows name."""
    import orjson

    found: set[bytes] = set()
    for topic, state in rows:
        if topic and state:
            try:
                found.update(key_ids(topic, orjson.loads(state)).values())
            except orjson.JSONDecodeError:
                continue  # a damaged state: verify names it, this check only counts keys
    return found
