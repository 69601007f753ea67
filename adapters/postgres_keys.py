"""The key store on PostgreSQL: tables beside the ledger's in its schema (`ledger_keys`,
`ledger_key_meta`, `ledger_forgets`), on a connection of its own, committed before the events
that need a key are appended. A deleted row is gone from any later dump of the schema, not at
once from the table's files and WAL (MVCC: ARCHITECTURE.md, "Forgetting")."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import psycopg
from psycopg.sql import SQL, Identifier

from mindledger.adapters.key_store import KEY_BYTES, KeyStore, KeyStoreError, Wrapping
from mindledger.domain.errors import UnavailableError

T = TypeVar("T")


class PostgresKeyStore(KeyStore):
    """Data keys in the ledger's schema."""

    def __init__(self, env: Mapping[str, str], master: bytes | None = None) -> None:
        super().__init__()
        self.env = dict(env)
        self.wrapping = Wrapping(master)
        schema_name = self.env.get("POSTGRES_SCHEMA") or "public"
        self.lock_name = f"mindledger key store {schema_name}"
        schema = Identifier(schema_name)
        self.keys_table = SQL("{}.ledger_keys").format(schema)
        self.meta_table = SQL("{}.ledger_key_meta").format(schema)
        self.forgets_table = SQL("{}.ledger_forgets").format(schema)
        self._con: psycopg.Connection[Any] | None = None
        self._db_lock = threading.RLock()

    def _connection(self) -> psycopg.Connection[Any]:
        if self._con is not None and self._con.broken:
            # The server ended the session (a restart): a new one. What failed on the old one
            # was refused and not retried here (a write must not be made twice).
            self._con.close()
            self._con = None
        if self._con is None:
            e = self.env
            try:
                con = psycopg.connect(
                    dbname=e["POSTGRES_DBNAME"],
                    host=e["POSTGRES_HOST"],
                    port=e["POSTGRES_PORT"],
                    user=e["POSTGRES_USER"],
                    password=e.get("POSTGRES_PASSWORD") or None,
                    autocommit=True,
                )
            except psycopg.Error as err:
                raise UnavailableError(f"cannot connect to PostgreSQL: {err}".strip()) from None
            with con.transaction():
                # Two processes creating the tables at once both pass IF NOT EXISTS and one
                # fails on the catalog's unique index: the first takes this lock, the second
                # waits for its commit and finds them.
                con.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.lock_name,))
                con.execute(
                    SQL(
                        "CREATE TABLE IF NOT EXISTS {} (id bytea PRIMARY KEY, key bytea NOT NULL)"
                    ).format(self.keys_table)
                )
                con.execute(
                    SQL(
                        "CREATE TABLE IF NOT EXISTS {} (name text PRIMARY KEY, value bytea)"
                    ).format(self.meta_table)
                )
                con.execute(
                    SQL(
                        "CREATE TABLE IF NOT EXISTS {} (id text PRIMARY KEY, plan text NOT NULL)"
                    ).format(self.forgets_table)
                )
            try:
                self._check(con)
            except BaseException:
                con.close()
                raise
            self._con = con
        return self._con

    def _check(self, con: psycopg.Connection[Any]) -> None:
        select = SQL("SELECT value FROM {} WHERE name = 'check'").format(self.meta_table)
        row = con.execute(select).fetchone()
        if row is None and self.wrapping.master is not None:
            # An empty store takes the master key it is first used with; one that already
            # holds keys or secrets stored unwrapped keeps none (`verify` refuses the key).
            used = con.execute(
                SQL(
                    "SELECT 1 FROM {} UNION ALL SELECT 1 FROM {} WHERE name LIKE 'secret:%' LIMIT 1"
                ).format(self.keys_table, self.meta_table)
            ).fetchone()
            if used is None:
                con.execute(
                    SQL("INSERT INTO {} VALUES ('check', %s) ON CONFLICT DO NOTHING").format(
                        self.meta_table
                    ),
                    (self.wrapping.check_value(),),
                )
                row = con.execute(select).fetchone()
        self.wrapping.verify(None if row is None else bytes(row[0]))

    def _again(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """`work` on the connection; on a session the server ended (a restart), once more on a
        new one. Only for work that may run twice: a read, or an insert that skips what is
        there (a failed transaction was rolled back with its session)."""
        with self._db_lock:
            try:
                return work(self._connection())
            except psycopg.OperationalError:
                if self._con is None or not self._con.broken:
                    raise
            return work(self._connection())

    def _store(self, keys: Mapping[bytes, bytes]) -> None:
        wrapped = [(i, self.wrapping.wrap(i, k)) for i, k in keys.items()]
        insert = SQL("INSERT INTO {} VALUES (%s, %s) ON CONFLICT DO NOTHING").format(
            self.keys_table
        )

        def store(con: psycopg.Connection[Any]) -> None:
            with con.transaction(), con.cursor() as cur:
                cur.executemany(insert, wrapped)

        self._again(store)

    def _fetch(self, ids: list[bytes]) -> dict[bytes, bytes]:
        select = SQL("SELECT id, key FROM {} WHERE id = ANY(%s)").format(self.keys_table)
        rows = self._again(lambda con: con.execute(select, (ids,)).fetchall())
        return {bytes(i): self.wrapping.unwrap(bytes(i), bytes(k)) for i, k in rows}

    def destroy(self, ids: Iterable[bytes], forget_id: str, plan: str) -> int:
        wanted = list(set(ids))
        with self._db_lock:
            con = self._connection()
            with con.transaction():
                cur = con.execute(
                    SQL("DELETE FROM {} WHERE id = ANY(%s)").format(self.keys_table), (wanted,)
                )
                con.execute(
                    SQL(
                        "INSERT INTO {} VALUES (%s, %s) ON CONFLICT (id) DO UPDATE SET plan = %s"
                    ).format(self.forgets_table),
                    (forget_id, plan, plan),
                )
            return cur.rowcount

    def pending_forgets(self) -> list[tuple[str, str]]:
        select = SQL("SELECT id, plan FROM {}").format(self.forgets_table)
        rows = self._again(lambda con: con.execute(select).fetchall())
        return [(str(i), str(p)) for i, p in rows]

    def finish_forget(self, forget_id: str) -> None:
        with self._db_lock:
            self._connection().execute(
                SQL("DELETE FROM {} WHERE id = %s").format(self.forgets_table), (forget_id,)
            )

    def secret(self, name: str) -> bytes:
        meta = f"secret:{name}"
        with self._db_lock:
            con = self._connection()
            select = SQL("SELECT value FROM {} WHERE name = %s").format(self.meta_table)
            row = con.execute(select, (meta,)).fetchone()
            if row is None:
                con.execute(
                    SQL("INSERT INTO {} VALUES (%s, %s) ON CONFLICT DO NOTHING").format(
                        self.meta_table
                    ),
                    (meta, self.wrapping.wrap(meta.encode(), os.urandom(KEY_BYTES))),
                )
                row = con.execute(select, (meta,)).fetchone()
            if row is None:
                raise KeyStoreError("the key store could not keep a secret")
        return self.wrapping.unwrap(meta.encode(), bytes(row[0]))

    def close(self) -> None:
        with self._db_lock:
            if self._con is not None:
                self._con.close()
                self._con = None
