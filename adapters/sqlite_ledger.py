"""The SQLite ledger: the library's recorder, with the hash chain written inside its transaction."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import OperationalError, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor, SQLiteFactory

from mindledger.adapters.hash_chain import chain_entries, genesis_hash
from mindledger.adapters.head_anchor import AnchoredRecorder
from mindledger.adapters.key_store import KeyStore
from mindledger.adapters.sealed_factory import SealedFactory
from mindledger.adapters.sqlite_reader import SQLiteLedgerReader as SQLiteLedgerReader
from mindledger.domain.errors import LedgerBusyError, LedgerReadOnlyError

META_DDL = (
    "CREATE TABLE IF NOT EXISTS ledger_meta ("
    "singleton INTEGER PRIMARY KEY CHECK (singleton = 1), "
    "ledger_id TEXT NOT NULL, created_at TEXT NOT NULL, genesis_hash TEXT NOT NULL, "
    "format INTEGER NOT NULL)"
)
CHAIN_DDL = (
    "CREATE TABLE IF NOT EXISTS ledger_chain ("
    "position INTEGER PRIMARY KEY, notification_id INTEGER NOT NULL UNIQUE, "
    "content_hash TEXT NOT NULL, hash TEXT NOT NULL)"
)


def new_genesis() -> tuple[str, str, str]:
    """A fresh (ledger id, creation time, genesis hash)."""
    ledger_id = uuid.uuid4().hex
    created_at = datetime.now(UTC).isoformat()
    return ledger_id, created_at, genesis_hash(ledger_id, created_at)


class ChainedSQLiteRecorder(AnchoredRecorder, SQLiteApplicationRecorder):
    """Appends events and their chain entries in one write transaction (SQLite's lock serializes
    writers across processes, so the chain cannot fork)."""

    def construct_create_table_statements(self) -> list[str]:
        return [*super().construct_create_table_statements(), META_DDL, CHAIN_DDL]

    def _create_table(self, c: SQLiteCursor) -> None:
        super()._create_table(c)
        c.execute("INSERT OR IGNORE INTO ledger_meta VALUES (1, ?, ?, ?, 1)", new_genesis())

    keys: KeyStore | None = None

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Any:
        if self.keys is not None:
            self.keys.flush()  # the keys these events are sealed with, durable first
        try:
            ids = super().insert_events(stored_events, **kwargs)
        except OperationalError as e:
            self._forget_head()
            if "locked" in str(e) or "busy" in str(e):
                raise LedgerBusyError(
                    "another mind process held the ledger's write lock too long; "
                    "nothing was written, run the command again"
                ) from e
            if "readonly" in str(e):
                raise LedgerReadOnlyError(
                    "this process cannot write the ledger (the home is read-only); nothing "
                    "was written: reading commands still work, recording needs a writable home"
                ) from e
            raise
        except BaseException:
            self._forget_head()
            raise
        self._record_head()
        return ids

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        # The event INSERTs come first: they take SQLite's write lock, so the head read below
        # cannot be stale.
        ids = super()._insert_events(c, stored_events, **kwargs)
        assert ids is not None
        c.execute("SELECT position, hash FROM ledger_chain ORDER BY position DESC LIMIT 1")
        head = c.fetchone()
        if head is None:
            c.execute("SELECT genesis_hash FROM ledger_meta")
            last, prev = 0, c.fetchone()[0]
        else:
            last, prev = head[0], head[1]
        if self.head_anchor is not None:
            if self._ledger_id is None:
                c.execute("SELECT ledger_id FROM ledger_meta")
                self._ledger_id = c.fetchone()[0]
            self._check_anchor(str(self._ledger_id), last, lambda at: _hash_at(c, at))
        entries = chain_entries(
            prev,
            last,
            (
                (nid, s.topic, _hex(s.originator_id), s.originator_version, s.state)
                for nid, s in zip(ids, stored_events, strict=True)
            ),
        )
        c.executemany("INSERT INTO ledger_chain VALUES (?, ?, ?, ?)", entries)
        if self.head_anchor is not None:
            self._note_head(str(self._ledger_id), entries)
        return ids

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        """The library's query, run as the one statement it is: SQLite reads a statement in a
        transaction of its own, and the library's explicit BEGIN ... COMMIT around it cost two
        more statements and their Python per read (a command makes two to four such reads
        before its append: a fifth of its time)."""
        statement = self.select_events_statement
        params: list[Any] = [
            originator_id.hex if isinstance(originator_id, UUID) else originator_id
        ]
        if gt is not None:
            statement += "AND originator_version>? "
            params.append(gt)
        if lte is not None:
            statement += "AND originator_version<=? "
            params.append(lte)
        statement += "ORDER BY originator_version " + ("DESC " if desc else "ASC ")
        if limit is not None:
            statement += "LIMIT ? "
            params.append(limit)
        with self.datastore.get_connection(commit=False) as conn, conn.cursor() as c:
            c.execute(statement, params)
            rows = c.fetchall()
        convert = self.convert_originator_id
        return [
            StoredEvent(
                originator_id=convert(row["originator_id"]),
                originator_version=row["originator_version"],
                topic=row["topic"],
                state=row["state"],
            )
            for row in rows
        ]


def _hash_at(c: SQLiteCursor, position: int) -> str | None:
    c.execute("SELECT hash FROM ledger_chain WHERE position = ?", (position,))
    row = c.fetchone()
    return None if row is None else str(row[0])


def _hex(originator_id: UUID | str) -> str:
    return originator_id.hex if isinstance(originator_id, UUID) else UUID(originator_id).hex


class LedgerSQLiteFactory(SealedFactory, SQLiteFactory):
    """The library's SQLite factory with our mapper and chained recorder."""

    application_recorder_class = ChainedSQLiteRecorder
