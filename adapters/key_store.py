"""The key store: the data keys that open sealed event fields, kept beside the ledger, never in it.

Forgetting destroys keys here; the ledger keeps its ciphertext and its hash chain. SQLite
(`keys.sqlite`, `secure_delete` on, its WAL truncated after a destruction) or a table in the
ledger's PostgreSQL schema (adapters/postgres_keys.py). With MIND_MASTER_KEY every data key is
stored wrapped (AES-256-GCM), so a copied ledger and key store are unreadable without it.
"""

from __future__ import annotations

import base64
import binascii
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mindledger.adapters.ledger_location import read_only_uri
from mindledger.domain.errors import (
    LedgerBusyError,
    LedgerCorruptError,
    LedgerReadOnlyError,
    MindError,
)

KEY_STORE_ENV = "LEDGER_KEY_STORE"  # the persistence setting naming keys.sqlite (or "postgres")
MASTER_KEY_ENV = "LEDGER_MASTER_KEY"  # the persistence setting carrying MIND_MASTER_KEY
KEY_BYTES = 32  # AES-256
ID_BYTES = 16
_CHECK = b"mindledger key store"
CHUNK = 900  # ids per IN (...) list, under every SQLite's variable limit
BULK = 5000  # a batch wanting this many keys reads the whole store once instead
_WRAPPING_LATER = (
    "this mind's key store was made without MIND_MASTER_KEY; unset it (wrapping an existing "
    "store is not supported)"
)
_UNWRAP = (
    "a key in this mind's key store cannot be opened with MIND_MASTER_KEY (stored under "
    "another master key, or damaged)"
)
_READ_ONLY = (
    "this process cannot write the ledger's key store (the home is read-only); nothing was "
    "written: reading commands still work, recording needs a writable home"
)


class KeyStoreError(MindError):
    """Raised when the key store cannot be opened with the master key given (or its absence)."""


def parse_master_key(text: str) -> bytes:
    """32 bytes from base64 (`openssl rand -base64 32`) or 64 hex digits."""
    text = text.strip()
    try:
        raw = bytes.fromhex(text) if len(text) == 64 else base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise KeyStoreError(
            "MIND_MASTER_KEY must be 32 bytes in base64 or hex; make one with "
            "`openssl rand -base64 32`"
        )
    return raw


class Wrapping:
    """Data keys as stored: raw, or sealed under the master key (the key id is the AAD)."""

    def __init__(self, master: bytes | None) -> None:
        self.master = AESGCM(master) if master else None

    def wrap(self, key_id: bytes, key: bytes) -> bytes:
        if self.master is None:
            return key
        nonce = os.urandom(12)
        return nonce + self.master.encrypt(nonce, key, key_id)

    def unwrap(self, key_id: bytes, stored: bytes) -> bytes:
        if self.master is None:
            return stored
        try:
            return self.master.decrypt(stored[:12], stored[12:], key_id)
        except InvalidTag:
            raise KeyStoreError(_UNWRAP) from None

    def check_value(self) -> bytes | None:
        if self.master is None:
            return None
        nonce = os.urandom(12)
        return nonce + self.master.encrypt(nonce, _CHECK, b"check")

    def verify(self, check: bytes | None) -> None:
        """Refuse a master key that is not the one the store was made with (or its absence)."""
        if check is None and self.master is not None:
            raise KeyStoreError(_WRAPPING_LATER)
        if check is not None and self.master is None:
            raise KeyStoreError(
                "this mind's key store is locked with a master key; set MIND_MASTER_KEY"
            )
        if check is not None and self.master is not None:
            try:
                self.master.decrypt(check[:12], check[12:], b"check")
            except InvalidTag:
                raise KeyStoreError(
                    "MIND_MASTER_KEY is not the key this mind's key store was made with"
                ) from None


class KeyStore:
    """Data keys by id. New keys wait in `pending` until `flush`, which a recorder calls before
    it appends the events they seal: a key is durable before any event needs it (a crash in
    between leaves an unused key, never an unreadable event).

    Keys are made ahead, in batches that double up to `AHEAD` (1, 2, 4, ...): the whole batch
    waits in `pending` and is stored by one flush, and the next keys are handed out of it, already
    durable, so a run of appends commits the key store once per batch instead of once per append
    (docs/decisions/0008-one-data-key-per-event-and-scope.md). A process that stops early leaves
    at most a batch of keys that seal nothing."""

    AHEAD = 64  # the largest batch of keys made ahead of use

    def __init__(self) -> None:
        self.pending: dict[bytes, bytes] = {}
        self._ahead: list[tuple[bytes, bytes]] = []  # made (pending or stored), not handed out
        self._batch = 1
        self._lock = threading.Lock()

    def new_key(self) -> tuple[bytes, bytes]:
        """A fresh (id, key), stored at the next `flush` if it is not stored already."""
        with self._lock:
            if not self._ahead:
                batch = [
                    (os.urandom(ID_BYTES), AESGCM.generate_key(bit_length=256))
                    for _ in range(self._batch)
                ]
                self.pending.update(batch)
                self._ahead = batch[::-1]  # popped from the end: handed out in order made
                self._batch = min(self._batch * 2, self.AHEAD)
            return self._ahead.pop()

    def add(self, keys: Mapping[bytes, bytes]) -> None:
        """Keys that came with imported events (`mind import ledger`), stored at `flush`."""
        with self._lock:
            self.pending.update(keys)

    def flush(self) -> None:
        """Store the pending keys (one transaction)."""
        with self._lock:
            pending, self.pending = self.pending, {}
        if pending:
            try:
                self._store(pending)
            except BaseException:
                with self._lock:
                    self.pending.update(pending)
                raise

    def get(self, ids: Iterable[bytes]) -> dict[bytes, bytes]:
        """The keys that still exist among `ids` (pending ones included)."""
        wanted = set(ids)
        if not self.pending:  # a reader's store (a catch-up's 25,000 ids): nothing to look at
            return self._fetch(list(wanted)) if wanted else {}
        with self._lock:
            found = {i: self.pending[i] for i in wanted if i in self.pending}
        rest = [i for i in wanted if i not in found]
        if rest:
            found.update(self._fetch(rest))
        return found

    def at_hand(self) -> Mapping[bytes, bytes]:
        """Keys this instance holds already and would serve from `get` without a read (a
        reader's scan of the store: `SQLiteKeyStore`); a key not among them may still exist
        (`get` it). None here: a view that hides keys (`MaskedKeys`) keeps this."""
        return {}

    # -- what a backend implements -----------------------------------------------------------

    def _store(self, keys: Mapping[bytes, bytes]) -> None:
        raise NotImplementedError

    def _fetch(self, ids: list[bytes]) -> dict[bytes, bytes]:
        raise NotImplementedError

    def destroy(self, ids: Iterable[bytes], forget_id: str, plan: str) -> int:
        """Delete these keys and note the forget as pending, in one transaction; how many
        keys existed."""
        raise NotImplementedError

    def pending_forgets(self) -> list[tuple[str, str]]:
        """(forget id, plan) of forgets whose keys are gone but whose purge has not finished."""
        raise NotImplementedError

    def finish_forget(self, forget_id: str) -> None:
        """The forget's purge is done: drop its note."""
        raise NotImplementedError

    def secret(self, name: str) -> bytes:
        """A named per-mind secret (made on first use): the HMAC key of lookups that must not
        be unkeyed hashes of text (the embeddings cache)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the store."""


class MemoryKeyStore(KeyStore):
    """Keys in a dict (unit tests' in-memory ledgers)."""

    AHEAD = 1  # nothing to make durable; callers read `pending` as the keys just used

    def __init__(self) -> None:
        super().__init__()
        self.keys: dict[bytes, bytes] = {}
        self.forgets: dict[str, str] = {}
        self.secrets: dict[str, bytes] = {}

    def _store(self, keys: Mapping[bytes, bytes]) -> None:
        self.keys.update(keys)

    def _fetch(self, ids: list[bytes]) -> dict[bytes, bytes]:
        return {i: self.keys[i] for i in ids if i in self.keys}

    def destroy(self, ids: Iterable[bytes], forget_id: str, plan: str) -> int:
        gone = [self.keys.pop(i) for i in set(ids) if i in self.keys]
        self.forgets[forget_id] = plan
        return len(gone)

    def pending_forgets(self) -> list[tuple[str, str]]:
        return list(self.forgets.items())

    def finish_forget(self, forget_id: str) -> None:
        self.forgets.pop(forget_id, None)

    def secret(self, name: str) -> bytes:
        return self.secrets.setdefault(name, os.urandom(KEY_BYTES))


_DDL = (
    "CREATE TABLE IF NOT EXISTS keys (id BLOB PRIMARY KEY, key BLOB NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB)",
    "CREATE TABLE IF NOT EXISTS forgets (id TEXT PRIMARY KEY, plan TEXT NOT NULL)",
)


class SQLiteKeyStore(KeyStore):
    """`keys.sqlite` beside the ledger (mode 0600). `secure_delete` zeroes a destroyed key's
    bytes in the file; the WAL, which still holds older page images, is truncated afterwards."""

    def __init__(self, path: Path, master: bytes | None = None, read_only: bool = False) -> None:
        super().__init__()
        self.path = path
        self.wrapping = Wrapping(master)
        self.read_only = read_only
        self._con: sqlite3.Connection | None = None
        self._db_lock = threading.RLock()
        self._all: dict[bytes, bytes] | None = None  # every key, once a batch wanted BULK

    @contextmanager
    def _connection(self, write: bool = False) -> Iterator[sqlite3.Connection | None]:
        with self._db_lock:
            if self._con is None:
                self._con = self._open(write)
            if self._con is None and write:
                self._con = self._open(True)
            yield self._con

    def _open(self, write: bool) -> sqlite3.Connection | None:
        if not self.path.exists():
            if not write or self.read_only:
                return None
            try:
                self.path.touch(mode=0o600)
            except PermissionError as e:
                raise LedgerReadOnlyError(_READ_ONLY) from e
        try:
            if self.read_only:
                uri = read_only_uri(self.path)
                con = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=15)
            else:
                con = sqlite3.connect(self.path, check_same_thread=False, timeout=15)
                con.execute("PRAGMA journal_mode=WAL")
                # A key must be as durable as the event it seals.
                con.execute("PRAGMA synchronous=FULL")
                con.execute("PRAGMA secure_delete=ON")
                with con:
                    for statement in _DDL:
                        con.execute(statement)
            row = con.execute("SELECT value FROM meta WHERE name = 'check'").fetchone()
        except sqlite3.DatabaseError as e:
            # The first write (WAL mode) of a store in a home this process cannot write.
            if isinstance(e, sqlite3.OperationalError) and "readonly" in str(e):
                raise LedgerReadOnlyError(_READ_ONLY) from e
            raise LedgerCorruptError(f"{self.path} is not a readable key store ({e})") from e
        check = row[0] if row else None
        try:
            if check is None and not self.read_only and self.wrapping.master is not None:
                check = self._first_use(con)
            self.wrapping.verify(check)
        except BaseException:
            con.close()
            raise
        return con

    def _first_use(self, con: sqlite3.Connection) -> bytes | None:
        """An empty store takes the master key it is first used with; one that already holds
        keys or secrets stored unwrapped keeps none (`verify` refuses the key)."""
        try:
            con.execute("BEGIN IMMEDIATE")  # no other process stores between look and write
        except sqlite3.OperationalError as e:
            if "locked" in str(e) or "busy" in str(e):
                raise _busy() from e
            raise
        with con:
            row = con.execute("SELECT value FROM meta WHERE name = 'check'").fetchone()
            if row is not None:
                return bytes(row[0])
            used = con.execute(
                "SELECT 1 FROM keys UNION ALL SELECT 1 FROM meta WHERE name LIKE 'secret:%' LIMIT 1"
            ).fetchone()
            if used is not None:
                return None
            check = self.wrapping.check_value()
            con.execute("INSERT INTO meta VALUES ('check', ?)", (check,))
            return check

    def _store(self, keys: Mapping[bytes, bytes]) -> None:
        if self.read_only:
            raise _read_only()
        try:
            with self._connection(write=True) as con:
                assert con is not None
                with con:
                    con.executemany(
                        "INSERT OR IGNORE INTO keys VALUES (?, ?)",
                        [(i, self.wrapping.wrap(i, k)) for i, k in keys.items()],
                    )
        except sqlite3.OperationalError as e:
            if "readonly" in str(e) or "read-only" in str(e):
                raise _read_only() from e
            if "locked" in str(e) or "busy" in str(e):
                raise _busy() from e
            raise

    def at_hand(self) -> Mapping[bytes, bytes]:
        """The scanned store, once a batch scanned it (what `get` serves from then on)."""
        return self._all or {}

    def _fetch(self, ids: list[bytes]) -> dict[bytes, bytes]:
        if len(ids) >= BULK or self._all is not None:
            return self._fetch_from_all(ids)
        return self._fetch_by_id(ids)

    def _fetch_from_all(self, ids: list[bytes]) -> dict[bytes, bytes]:
        # A catch-up or replay wants most of the store: one scan of it (~3x faster per key
        # than IN lookups), kept for this instance's later batches. Only a reader's instance
        # grows one, and a forget's purge reads through a new instance: no destroyed key is
        # served from it.
        if self._all is None:
            with self._connection() as con:
                rows = [] if con is None else con.execute("SELECT id, key FROM keys").fetchall()
            if self.wrapping.master is None:
                self._all = dict(rows)
            else:
                self._all = {i: self.wrapping.unwrap(i, k) for i, k in rows}
        found: dict[bytes, bytes] = {}
        missing: list[bytes] = []
        known = self._all.get
        for i in ids:
            key = known(i)
            if key is None:
                missing.append(i)
            else:
                found[i] = key
        if missing:  # keys stored since the scan
            newer = self._fetch_by_id(missing)
            self._all.update(newer)
            found.update(newer)
        return found

    def _fetch_by_id(self, ids: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        # In id order, each chunk's lookups walk the index's pages in order: about half the
        # time of random order once the store outgrows SQLite's page cache.
        ids = sorted(ids)
        with self._connection() as con:
            if con is None:
                return found
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = con.execute(f"SELECT id, key FROM keys WHERE id IN ({marks})", chunk)
                if self.wrapping.master is None:
                    found.update(rows)  # stored as they are (BLOBs read back as bytes)
                    continue
                for key_id, stored in rows:
                    found[key_id] = self.wrapping.unwrap(key_id, stored)
        return found

    def destroy(self, ids: Iterable[bytes], forget_id: str, plan: str) -> int:
        wanted = list(set(ids))
        gone = 0
        self._all = None
        with self._connection(write=True) as con:
            assert con is not None
            with con:
                for start in range(0, len(wanted), CHUNK):
                    chunk = wanted[start : start + CHUNK]
                    marks = ",".join("?" * len(chunk))
                    gone += con.execute(f"DELETE FROM keys WHERE id IN ({marks})", chunk).rowcount
                con.execute("INSERT OR REPLACE INTO forgets VALUES (?, ?)", (forget_id, plan))
            self._truncate_wal(con)
        return gone

    @staticmethod
    def _truncate_wal(con: sqlite3.Connection) -> None:
        # The WAL holds the pages as they were before the delete (with the keys); a TRUNCATE
        # checkpoint copies the zeroed pages back and empties it. Another reader may hold it
        # for a moment: retry a few times (`forget` finishes the job on its next run anyway).
        for _ in range(50):
            busy = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if not busy:
                return
            threading.Event().wait(0.05)

    def pending_forgets(self) -> list[tuple[str, str]]:
        with self._connection() as con:
            if con is None:
                return []
            return [(str(i), str(p)) for i, p in con.execute("SELECT id, plan FROM forgets")]

    def finish_forget(self, forget_id: str) -> None:
        with self._connection(write=True) as con:
            assert con is not None
            with con:
                con.execute("DELETE FROM forgets WHERE id = ?", (forget_id,))
            self._truncate_wal(con)

    def secret(self, name: str) -> bytes:
        meta = f"secret:{name}"
        with self._connection(write=not self.read_only) as con:
            row = (
                None
                if con is None
                else con.execute("SELECT value FROM meta WHERE name = ?", (meta,)).fetchone()
            )
            if row is None:
                if con is None or self.read_only:
                    raise KeyStoreError("this mind has no key store yet; record something first")
                fresh = os.urandom(KEY_BYTES)
                with con:
                    con.execute(
                        "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                        (meta, self.wrapping.wrap(meta.encode(), fresh)),
                    )
                row = con.execute("SELECT value FROM meta WHERE name = ?", (meta,)).fetchone()
        return self.wrapping.unwrap(meta.encode(), bytes(row[0]))

    def close(self) -> None:
        with self._db_lock:
            if self._con is not None:
                self._con.close()
                self._con = None


def _busy() -> LedgerBusyError:
    return LedgerBusyError(
        "another mind process held the key store's write lock too long; nothing was written, "
        "run the command again"
    )


def _read_only() -> LedgerReadOnlyError:
    return LedgerReadOnlyError(_READ_ONLY)


def key_store_from_env(env: Any) -> KeyStore | None:
    """The key store a persistence environment names (None: events are stored unsealed, which
    only tools that read old ledgers do)."""
    where = env.get(KEY_STORE_ENV)
    if not where:
        return None
    master_text = env.get(MASTER_KEY_ENV) or ""
    master = parse_master_key(master_text) if master_text else None
    if where == "memory":
        return MemoryKeyStore()
    if where == "postgres":
        from mindledger.adapters.postgres_keys import PostgresKeyStore

        return PostgresKeyStore(env, master)
    path = Path(where.removeprefix("ro:"))
    return SQLiteKeyStore(path, master, read_only=where.startswith("ro:"))
