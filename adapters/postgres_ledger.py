"""The PostgreSQL ledger: the library recorder, with the hash chain written under its lock."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresFactory
from eventsourcing.utils import retry
from psycopg.conninfo import conninfo_to_dict
from psycopg.sql import SQL, Identifier

from mindledger.adapters.hash_chain import ChainRow, chain_entries
from mindledger.adapters.head_anchor import AnchoredRecorder
from mindledger.adapters.key_store import KeyStore
from mindledger.adapters.library_settings import PREFIX
from mindledger.adapters.sealed_factory import SealedFactory
from mindledger.adapters.sealing import open_rows
from mindledger.adapters.sqlite_ledger import new_genesis
from mindledger.domain.errors import LedgerCorruptError, MindError, UnavailableError

EVENTS_TABLE = "mind_events"


def postgres_env(dsn: str, schema: str = "") -> dict[str, str]:
    """eventsourcing settings from a libpq DSN such as postgresql://user:pw@127.0.0.1:5432/db."""
    if not dsn:
        raise MindError("the postgres backend needs MIND_POSTGRES_DSN or `postgres_dsn` in config")
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as e:
        raise MindError(f"MIND_POSTGRES_DSN is not a valid PostgreSQL DSN ({e})") from None
    return {
        "PERSISTENCE_MODULE": "mindledger.adapters.postgres_ledger:LedgerPostgresFactory",
        "POSTGRES_DBNAME": str(parts.get("dbname", "")),
        "POSTGRES_HOST": str(parts.get("host", "127.0.0.1")),
        "POSTGRES_PORT": str(parts.get("port", "5432")),
        "POSTGRES_USER": str(parts.get("user", "")),
        "POSTGRES_PASSWORD": str(parts.get("password", "")),
        "POSTGRES_SCHEMA": schema,
        # The library reads MIND_POSTGRES_SCHEMA (the mind's own setting, in the environment)
        # before POSTGRES_SCHEMA: passed here too, the value the settings chose (a --schema flag
        # over the environment) is the schema the library writes, as the readers read.
        PREFIX + "POSTGRES_SCHEMA": schema,
        "POSTGRES_LOCK_TIMEOUT": "15",
        "POSTGRES_POOL_SIZE": "2",
    }


class ChainedPostgresRecorder(AnchoredRecorder, PostgresApplicationRecorder):
    """Appends events and chain entries in one transaction, after the library's EXCLUSIVE lock."""

    def __init__(self, datastore: Any, *, events_table_name: str = EVENTS_TABLE) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        schema = Identifier(self.datastore.schema)
        self.meta = SQL("{}.ledger_meta").format(schema)
        self.chain = SQL("{}.ledger_chain").format(schema)
        self.sql_create_statements += [
            SQL(
                "CREATE TABLE IF NOT EXISTS {} (singleton integer PRIMARY KEY CHECK "
                "(singleton = 1), ledger_id text NOT NULL, created_at text NOT NULL, "
                "genesis_hash text NOT NULL, format integer NOT NULL)"
            ).format(self.meta),
            SQL(
                "CREATE TABLE IF NOT EXISTS {} (position bigint PRIMARY KEY, "
                "notification_id bigint NOT NULL UNIQUE, content_hash text NOT NULL, "
                "hash text NOT NULL)"
            ).format(self.chain),
        ]

    def create_table(self) -> None:
        super().create_table()
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(
                SQL("INSERT INTO {} VALUES (1, %s, %s, %s, 1) ON CONFLICT DO NOTHING").format(
                    self.meta
                ),
                new_genesis(),
            )

    keys: KeyStore | None = None

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Events and their chain entries in one transaction that any refusal rolls back.

        The append is ours, not the library's: its `insert_events` (eventsourcing 9.5) catches
        what its id fetch raises and re-raises it only after the transaction block committed,
        so a check refusing there left the events written; and with POSTGRES_ENABLE_DB_FUNCTIONS
        it inserts through a database function that never writes the chain. Here every
        statement, the library's and ours, runs inside `conn.transaction()`, and an exception
        leaves that block by propagating, which rolls it back.
        """
        if not stored_events:
            return None  # as the library: nothing to write, no transaction
        if self.keys is not None:
            self.keys.flush()  # the keys these events are sealed with, committed first
        try:
            ids: list[int] = self._append(stored_events, **kwargs)
        except BaseException:
            self._forget_head()
            raise
        self._record_head()
        return ids

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)  # as the library's
    def _append(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> list[int]:
        failure: Exception | None = None
        ids: Sequence[int] | None = None
        with self.datastore.get_connection() as conn, conn.transaction():
            # Pipelined, as the library does it: the statements go in one round trip.
            with conn.pipeline() as pipeline, conn.cursor() as curs:
                try:
                    self._insert_events(curs, stored_events, **kwargs)  # the library's hook
                    # The EXCLUSIVE table lock, NOTIFY and INSERT ... RETURNING, as the library
                    # does them; under that lock the chain's head cannot move until we commit.
                    self._insert_stored_events(curs, stored_events, **kwargs)
                    pipeline.sync()  # a conflict (IntegrityError) is raised here
                    ids = self._fetch_ids_after_insert_events(curs, stored_events, **kwargs)
                    self._append_chain(curs, ids or [], stored_events)
                except Exception as e:  # re-raised below (out of a pipeline psycopg warns)
                    failure = e
            if failure is not None:
                raise failure  # still inside the transaction, which it rolls back
        assert ids is not None
        return list(ids)

    def _append_chain(
        self, curs: Any, ids: Sequence[int], stored_events: Sequence[StoredEvent]
    ) -> None:
        curs.execute(
            SQL("SELECT position, hash FROM {} ORDER BY position DESC LIMIT 1").format(self.chain)
        )
        head = curs.fetchone()
        if head is None:
            curs.execute(SQL("SELECT genesis_hash FROM {}").format(self.meta))
            last, prev = 0, curs.fetchone()["genesis_hash"]
        else:
            last, prev = head["position"], head["hash"]
        if self.head_anchor is not None:
            if self._ledger_id is None:
                curs.execute(SQL("SELECT ledger_id FROM {}").format(self.meta))
                self._ledger_id = curs.fetchone()["ledger_id"]
            self._check_anchor(str(self._ledger_id), last, lambda at: self._hash_at(curs, at))
        entries = chain_entries(
            prev,
            last,
            (
                (nid, s.topic, UUID(str(s.originator_id)).hex, s.originator_version, s.state)
                for nid, s in zip(ids, stored_events, strict=True)
            ),
        )
        curs.executemany(SQL("INSERT INTO {} VALUES (%s, %s, %s, %s)").format(self.chain), entries)
        if self.head_anchor is not None:
            self._note_head(str(self._ledger_id), entries)

    def _hash_at(self, curs: Any, position: int) -> str | None:
        curs.execute(SQL("SELECT hash FROM {} WHERE position = %s").format(self.chain), (position,))
        row = curs.fetchone()
        return None if row is None else str(row["hash"])


class LedgerPostgresFactory(SealedFactory, PostgresFactory):
    """The library's PostgreSQL factory with our mapper and chained recorder."""

    application_recorder_class = ChainedPostgresRecorder


class PostgresLedgerReader:
    """Reads the chain and events for verify, log and projectors."""

    def __init__(self, env: dict[str, str], keys: KeyStore | None = None) -> None:
        self.keys, self.env = keys, env
        self.schema = env.get("POSTGRES_SCHEMA") or "public"
        self.conn = self._connect()
        self.listening = False
        s = Identifier(self.schema)
        self.events = SQL("{}.{}").format(s, Identifier(EVENTS_TABLE))
        self.chain = SQL("{}.ledger_chain").format(s)
        self.meta_table = SQL("{}.ledger_meta").format(s)

    def _connect(self) -> psycopg.Connection[Any]:
        env = self.env
        try:
            return psycopg.connect(
                dbname=env["POSTGRES_DBNAME"],
                host=env["POSTGRES_HOST"],
                port=env["POSTGRES_PORT"],
                user=env["POSTGRES_USER"],
                password=env["POSTGRES_PASSWORD"] or None,
                autocommit=True,
            )
        except psycopg.Error as e:
            raise UnavailableError(f"cannot connect to PostgreSQL: {e}".strip()) from None

    def _reconnect(self) -> None:
        """A new session in place of one the server ended (a restart, a failover): a warm
        `mind serve` keeps its reader for its whole life."""
        self.conn.close()
        self.conn = self._connect()
        self.listening = False

    def close(self) -> None:
        """Release the connection."""
        self.conn.close()
        if self.keys is not None:
            self.keys.close()

    def open_states(
        self, rows: Sequence[Any], skip: frozenset[str] = frozenset()
    ) -> list[dict[str, Any]]:
        """The rows' states, decoded, their sealed fields opened (placeholders where forgotten)
        but those named in `skip`, which stay sealed."""
        return open_rows(rows, self.keys, skip)

    def wait(self, timeout: float) -> None:
        """Block until the recorder NOTIFYs an insert (LISTEN), or `timeout` seconds pass."""
        if self.conn.broken:
            self._reconnect()  # a notification missed meanwhile: the caller reads the ledger
        if not self.listening:
            self.conn.execute(SQL("LISTEN {}").format(Identifier(EVENTS_TABLE)))
            self.listening = True
        try:
            for _ in self.conn.notifies(timeout=timeout, stop_after=1):
                pass
        except psycopg.OperationalError:
            if not self.conn.broken:
                raise  # ended by the server: the next wait reconnects

    def _query(self, sql: Any, params: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of one read; a session the server ended is opened again and the read asked
        once more (a read changes nothing, so asking again is safe)."""
        try:
            return self.conn.execute(sql, params).fetchall()
        except psycopg.OperationalError:
            if not self.conn.broken:
                raise
        self._reconnect()
        return self.conn.execute(sql, params).fetchall()

    def meta(self) -> tuple[str, str, str]:
        """(ledger id, created at, genesis hash)."""
        rows = self._query(
            SQL("SELECT ledger_id, created_at, genesis_hash FROM {}").format(self.meta_table)
        )
        if not rows:
            raise LedgerCorruptError("the ledger has no genesis record")
        return rows[0][0], rows[0][1], rows[0][2]

    def head(self) -> tuple[int, str | None]:
        """(last position, its hash)."""
        rows = self._query(
            SQL("SELECT position, hash FROM {} ORDER BY position DESC LIMIT 1").format(self.chain)
        )
        return (rows[0][0], rows[0][1]) if rows else (0, None)

    def _select(self, where: str, order: str, params: tuple[Any, ...]) -> list[ChainRow]:
        rows = self._query(
            SQL(
                "SELECT c.position, c.content_hash, c.hash, e.topic, e.originator_id, "
                "e.originator_version, e.state FROM {} c LEFT JOIN {} e "
                "ON e.notification_id = c.notification_id WHERE " + where + " ORDER BY " + order
            ).format(self.chain, self.events),
            params,
        )
        return [
            ChainRow(p, c, h, t, o.hex if o else None, v, bytes(st) if st else st)
            for p, c, h, t, o, v, st in rows
        ]

    def rows(
        self, after: int = 0, batch: int = 5000, stop: int | None = None
    ) -> Iterator[ChainRow]:
        """Chain rows joined with their events, in position order."""
        while True:
            chunk = self._select(
                "c.position > %s AND c.position <= %s",
                "c.position LIMIT %s",
                (after, stop if stop is not None else 2**62, batch),
            )
            yield from chunk
            if len(chunk) < batch:
                return
            after = chunk[-1].position

    def rows_at(self, positions: Sequence[int]) -> list[ChainRow]:
        """The chain rows at `positions`, joined with their events, in position order (a
        forget's lookups: `adapters.forget_index`)."""
        return self._select("c.position = ANY(%s)", "c.position", (list(positions),))

    def tail(self, limit: int, topic_prefix: str = "") -> list[ChainRow]:
        """The last `limit` rows whose topic starts with `topic_prefix`, oldest first."""
        rows = self._select(
            "e.topic LIKE %s", "c.position DESC LIMIT %s", (topic_prefix + "%", limit)
        )
        return list(reversed(rows))

    def orphans(self, limit: int = 100) -> list[ChainRow]:
        """Event rows that have no chain entry (position 0), normally none."""
        rows = self._query(
            SQL(
                "SELECT e.topic, e.originator_id, e.originator_version, e.state FROM {} e "
                "LEFT JOIN {} c ON c.notification_id = e.notification_id "
                "WHERE c.position IS NULL ORDER BY e.notification_id LIMIT %s"
            ).format(self.events, self.chain),
            (limit,),
        )
        return [ChainRow(0, "", "", t, o.hex, v, bytes(st)) for t, o, v, st in rows]

    def find_content(self, digest: str) -> int | None:
        """The position whose chain entry has this content digest."""
        rows = self._query(
            SQL("SELECT position FROM {} WHERE content_hash = %s").format(self.chain), (digest,)
        )
        return rows[0][0] if rows else None

    def find_hash(self, hash_: str, at: int | None = None) -> int | None:
        """The position whose chain hash is this (to compare with an anchor); with `at`, only
        that position is looked at (a primary-key lookup instead of a scan)."""
        if at is not None:
            rows = self._query(
                SQL("SELECT position FROM {} WHERE position = %s AND hash = %s").format(self.chain),
                (at, hash_),
            )
        else:
            rows = self._query(
                SQL("SELECT position FROM {} WHERE hash = %s ORDER BY position LIMIT 1").format(
                    self.chain
                ),
                (hash_,),
            )
        return rows[0][0] if rows else None

    def positions(self, notification_ids: list[int]) -> list[int]:
        """Ledger positions of the given notification ids, in order."""
        if not notification_ids:
            return []
        rows = self._query(
            SQL("SELECT position FROM {} WHERE notification_id = ANY(%s) ORDER BY position").format(
                self.chain
            ),
            (notification_ids,),
        )
        return [r[0] for r in rows]
