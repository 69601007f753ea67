"""The SQLite ledger read straight from its file, read-only: the chain and its events for verify,
log, status and the projectors. Apart from the recorder (`sqlite_ledger`), so that a read imports
neither the eventsourcing library nor the event classes: only opening sealed rows (a catch-up,
`open_states`) loads the sealing."""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindledger.adapters.hash_chain import ChainRow
from mindledger.adapters.ledger_location import read_only_uri
from mindledger.domain.errors import LedgerCorruptError

if TYPE_CHECKING:
    from mindledger.adapters.key_store import KeyStore

_SELECT = (
    "SELECT c.position, c.content_hash, c.hash, e.topic, e.originator_id, "
    "e.originator_version, e.state FROM ledger_chain c "
    "LEFT JOIN stored_events e ON e.rowid = c.notification_id "
)
_ROWS = _SELECT + "WHERE c.position > ? ORDER BY c.position LIMIT ?"
_as_chain_row = functools.partial(tuple.__new__, ChainRow)


class SQLiteLedgerReader:
    """Reads the chain and events straight from the file, read-only, for verify/log/projectors;
    `open_states` decodes rows and opens their sealed fields with `keys`."""

    def __init__(self, path: Path, keys: KeyStore | None = None) -> None:
        self.keys = keys
        if not path.exists():
            raise FileNotFoundError(path)
        try:
            self.conn = sqlite3.connect(read_only_uri(path), uri=True, check_same_thread=False)
            self.conn.execute("SELECT 1 FROM ledger_meta LIMIT 1").fetchall()
        except sqlite3.DatabaseError as e:
            raise LedgerCorruptError(f"{path} is not a readable mindledger ledger ({e})") from e

    def close(self) -> None:
        """Release the file."""
        self.conn.close()
        if self.keys is not None:
            self.keys.close()

    def open_states(
        self, rows: Sequence[Any], skip: frozenset[str] = frozenset()
    ) -> list[dict[str, Any]]:
        """The rows' states, decoded, their sealed fields opened (placeholders where forgotten)
        but those named in `skip`, which stay sealed."""
        from mindledger.adapters.sealing import open_rows

        return open_rows(rows, self.keys, skip)

    def wait(self, timeout: float) -> None:
        """SQLite has no notifications: waiting is sleeping until the next poll."""
        time.sleep(timeout)

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as e:
            raise LedgerCorruptError(f"the ledger file is damaged ({e})") from e

    def meta(self) -> tuple[str, str, str]:
        """(ledger id, created at, genesis hash)."""
        rows = self._query("SELECT ledger_id, created_at, genesis_hash FROM ledger_meta")
        if not rows:
            raise LedgerCorruptError("the ledger has no genesis record")
        return rows[0][0], rows[0][1], rows[0][2]

    def head(self) -> tuple[int, str | None]:
        """(last position, its hash); (0, None) for an empty ledger."""
        rows = self._query("SELECT position, hash FROM ledger_chain ORDER BY position DESC LIMIT 1")
        return (rows[0][0], rows[0][1]) if rows else (0, None)

    def rows(
        self, after: int = 0, batch: int = 5000, stop: int | None = None
    ) -> Iterator[ChainRow]:
        """Chain rows joined with their events, in position order."""
        while True:
            chunk = self._query(_ROWS, (after, batch))
            if stop is None or (chunk and chunk[-1][0] <= stop):
                # The whole chunk at once (a catch-up's 25,000 rows): no test per row, and
                # each fetched tuple (the seven fields, in order) made a ChainRow in C, without
                # NamedTuple's Python-level __new__ (a fifth of the read).
                yield from map(_as_chain_row, chunk)
            else:
                for row in chunk:
                    if row[0] > stop:
                        return
                    yield ChainRow(*row)
            if len(chunk) < batch or (stop is not None and chunk[-1][0] >= stop):
                return
            after = chunk[-1][0]

    def rows_at(self, positions: Sequence[int]) -> list[ChainRow]:
        """The chain rows at `positions` (a few hundred at most), joined with their events, in
        position order (a forget's lookups: `adapters.forget_index`)."""
        marks = ",".join("?" * len(positions))
        sql = f"{_SELECT}WHERE c.position IN ({marks}) ORDER BY c.position"
        return [ChainRow(*r) for r in self._query(sql, tuple(positions))]

    def orphans(self, limit: int = 100) -> list[ChainRow]:
        """Event rows that have no chain entry (position 0), normally none."""
        rows = self._query(
            "SELECT 0, '', '', e.topic, e.originator_id, e.originator_version, e.state "
            "FROM stored_events e LEFT JOIN ledger_chain c ON c.notification_id = e.rowid "
            "WHERE c.position IS NULL ORDER BY e.rowid LIMIT ?",
            (limit,),
        )
        return [ChainRow(*r) for r in rows]

    def find_content(self, digest: str) -> int | None:
        """The position whose chain entry has this content digest."""
        rows = self._query("SELECT position FROM ledger_chain WHERE content_hash = ?", (digest,))
        return rows[0][0] if rows else None

    def find_hash(self, hash_: str, at: int | None = None) -> int | None:
        """The position whose chain hash is this (to compare with an anchor); with `at`, only
        that position is looked at (a primary-key lookup instead of a scan)."""
        if at is not None:
            rows = self._query(
                "SELECT position FROM ledger_chain WHERE position = ? AND hash = ?", (at, hash_)
            )
        else:
            rows = self._query(
                "SELECT position FROM ledger_chain WHERE hash = ? ORDER BY position LIMIT 1",
                (hash_,),
            )
        return rows[0][0] if rows else None

    def stream(self, originator_id: str) -> list[ChainRow]:
        """One aggregate's event rows in version order, as the application loads them (from
        the events table: an event without a chain entry too, at position 0)."""
        rows = self._query(
            "SELECT COALESCE(c.position, 0), COALESCE(c.content_hash, ''), COALESCE(c.hash, ''), "
            "e.topic, e.originator_id, e.originator_version, e.state FROM stored_events e "
            "LEFT JOIN ledger_chain c ON c.notification_id = e.rowid "
            "WHERE e.originator_id = ? ORDER BY e.originator_version",
            (originator_id,),
        )
        return [ChainRow(*r) for r in rows]

    def tail(self, limit: int, topic_prefix: str = "") -> list[ChainRow]:
        """The last `limit` chain rows whose topic starts with `topic_prefix`, oldest first."""
        rows = self._query(
            "SELECT c.position, c.content_hash, c.hash, e.topic, e.originator_id, "
            "e.originator_version, e.state FROM ledger_chain c "
            "JOIN stored_events e ON e.rowid = c.notification_id "
            "WHERE e.topic LIKE ? ORDER BY c.position DESC LIMIT ?",
            (topic_prefix + "%", limit),
        )
        return [ChainRow(*r) for r in reversed(rows)]

    def positions(self, notification_ids: list[int]) -> list[int]:
        """Ledger positions of the given notification ids, in order."""
        if not notification_ids:
            return []
        marks = ",".join("?" * len(notification_ids))
        rows = self._query(
            f"SELECT position FROM ledger_chain WHERE notification_id IN ({marks}) "
            "ORDER BY position",
            tuple(notification_ids),
        )
        return [r[0] for r in rows]
