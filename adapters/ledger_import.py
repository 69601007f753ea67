"""Writing a checked ledger export into an empty ledger: the same genesis, the same stored bytes,
so the recorder's own chain (adapters/hash_chain.py) recomputes the same hashes.

The events go through the recorder's ordinary batch insert, which writes the chain entries in
the same transaction; each batch's new head is compared with the export's hash at that line.
The keys a batch's lines carry go into the recorder's key store first (its insert flushes them
before it appends), so every imported envelope opens as it did in the exported mind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from mindledger.adapters.export_check import ExportInvalidError
from mindledger.adapters.export_form import ExportedEvent
from mindledger.adapters.ledger_export import Genesis
from mindledger.domain.errors import MindError

BATCH = 2000


def adopt_genesis(recorder: Any, genesis: Genesis) -> None:
    """Give a freshly created, empty ledger the exported mind's genesis (its random one goes)."""
    from mindledger.adapters.sqlite_ledger import ChainedSQLiteRecorder

    values = (genesis.ledger_id, genesis.created_at, genesis.genesis)
    if isinstance(recorder, ChainedSQLiteRecorder):
        with recorder.datastore.transaction(commit=True) as c:
            c.execute("SELECT count(*) FROM ledger_chain")
            _require_empty(c.fetchone()[0])
            c.execute(
                "UPDATE ledger_meta SET ledger_id = ?, created_at = ?, genesis_hash = ?", values
            )
        return
    from psycopg.sql import SQL

    from mindledger.adapters.postgres_ledger import ChainedPostgresRecorder

    if not isinstance(recorder, ChainedPostgresRecorder):
        raise MindError("this ledger backend cannot take an imported genesis")
    with recorder.datastore.transaction(commit=True) as curs:
        curs.execute(SQL("SELECT count(*) AS n FROM {}").format(recorder.chain))
        row = curs.fetchone()
        _require_empty(row["n"] if row else 0)
        curs.execute(
            SQL("UPDATE {} SET ledger_id = %s, created_at = %s, genesis_hash = %s").format(
                recorder.meta
            ),
            values,
        )


def _require_empty(count: int) -> None:
    if count:
        raise MindError(
            "the ledger already holds events; a ledger is imported only into a new home"
        )


def append_exported(
    recorder: Any,
    events: Iterable[ExportedEvent],
    batch: int = BATCH,
    on_batch: Callable[[int], None] | None = None,
    added_keys: set[bytes] | None = None,
) -> int:
    """Insert every event in order, `batch` per transaction, the keys its lines carry stored
    before it; returns how many were written. `added_keys` collects the ids of the keys given
    to the key store (for `discard_imported`)."""
    pending: list[StoredEvent] = []
    keys: dict[bytes, bytes] = {}
    last: ExportedEvent | None = None
    written = 0

    def flush() -> None:
        nonlocal written, pending
        if not pending:
            return
        if keys:
            store = getattr(recorder, "keys", None)
            if store is None:
                raise MindError("this ledger has no key store for the export's sealed fields")
            if added_keys is not None:
                added_keys.update(keys)
            store.add(keys)  # the recorder flushes them before it appends the events
            keys.clear()
        recorder.insert_events(pending)
        written += len(pending)
        _require_same_head(recorder, last)
        if on_batch is not None:
            on_batch(len(pending))
        pending = []

    for event in events:
        pending.append(_stored(event))
        keys.update(event.keys)
        last = event
        if len(pending) >= batch:
            flush()
    flush()
    return written


def _stored(event: ExportedEvent) -> StoredEvent:
    try:
        aggregate = UUID(hex=event.aggregate)
    except ValueError:
        aggregate = None
    if aggregate is None or aggregate.hex != event.aggregate:
        raise ExportInvalidError(event.position + 1, "the aggregate is not a UUID in hex")
    return StoredEvent(aggregate, event.version, event.topic, event.state)


def _require_same_head(recorder: Any, last: ExportedEvent | None) -> None:
    """The chain the recorder wrote must end where the export's did (it hashes the same bytes)."""
    if last is None:
        return
    from mindledger.adapters.sqlite_ledger import ChainedSQLiteRecorder

    if isinstance(recorder, ChainedSQLiteRecorder):
        with recorder.datastore.transaction(commit=False) as c:
            c.execute("SELECT position, hash FROM ledger_chain ORDER BY position DESC LIMIT 1")
            position, hash_ = c.fetchone()
    else:
        from psycopg.sql import SQL

        with recorder.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL("SELECT position, hash FROM {} ORDER BY position DESC LIMIT 1").format(
                    recorder.chain
                )
            )
            row = curs.fetchone()
            position, hash_ = row["position"], row["hash"]
    if (position, hash_) != (last.position, last.hash):
        raise MindError(
            f"the imported ledger's chain differs from the export at position {last.position}; "
            "nothing was kept"
        )


def discard_imported(recorder: Any, added_keys: Iterable[bytes] = ()) -> None:
    """Empty a PostgreSQL ledger an import failed to finish, and drop the keys the import
    stored (it was empty before the import; a SQLite home is removed as files instead)."""
    from mindledger.adapters.sqlite_ledger import ChainedSQLiteRecorder

    if isinstance(recorder, ChainedSQLiteRecorder):
        return
    from psycopg.sql import SQL, Identifier

    from mindledger.adapters.postgres_keys import PostgresKeyStore

    events = SQL("{}.{}").format(
        Identifier(recorder.datastore.schema), Identifier(recorder.events_table_name)
    )
    with recorder.datastore.transaction(commit=True) as curs:
        curs.execute(SQL("DELETE FROM {}").format(recorder.chain))
        curs.execute(SQL("DELETE FROM {}").format(events))
    ids = list(added_keys)
    if ids and isinstance(recorder.keys, PostgresKeyStore):
        # Not `destroy`: nothing was forgotten, so no forget is noted; the keys seal nothing now.
        with recorder.datastore.transaction(commit=True) as curs:
            curs.execute(
                SQL("DELETE FROM {} WHERE id = ANY(%s)").format(recorder.keys.keys_table), (ids,)
            )
