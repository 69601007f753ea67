"""The projector: applies ledger events to DuckDB in batches (rows + position, one txn)."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026
import orjson

from mindledger.domain.errors import MindError
from mindledger.domain.private_files import create_private_file, tighten
from mindledger.domain.text import FORGOTTEN_MARK
from mindledger.projections.engine.duckdb_files import (
    ROW_GROUP_ROWS,
    arrow_scans,
    checkpoint,
    close,
    commit,
    connect,
)
from mindledger.projections.engine.duckdb_files import (
    scratch as scratch_connection,
)
from mindledger.projections.engine.gc_pause import paused_gc
from mindledger.projections.engine.handlers import TABLE_OF_KIND, Ev, Rows
from mindledger.projections.engine.kept_reads import (
    INDEX_TOTALS,
    TRACKED_TERMS,
    WRITTEN_EVERY_BATCH,
    KeptReads,
    written_by,
)
from mindledger.projections.engine.ledger_refs import kept_in_ledger, stored_payload
from mindledger.projections.engine.maintenance import refresh_tension, sort_term_index
from mindledger.projections.engine.one_thread import one_thread
from mindledger.projections.engine.ports import LedgerReader, LedgerRow
from mindledger.projections.engine.registry import HANDLERS
from mindledger.projections.engine.schema import (
    TABLES,
    arrow_schema,
    column_names,
    create_all,
    struct_type,
)
from mindledger.projections.engine.schema import schema_version as current_schema
from mindledger.projections.engine.summary import (
    read_summary,
    remove_summary,
    vouches_for,
    write_summary,
)
from mindledger.projections.retrieval.text_index import term_counts

if TYPE_CHECKING:
    import pyarrow as pa

NAME = "main"
# Large batches amortise DuckDB's per-statement and index-commit cost (1M events: 31k/s at
# 10,000 per batch, 40k/s at 25,000); a follower's batches are naturally small. A row group's
# worth: the batch's `events` rows fill one, which DuckDB writes to the file as it inserts
# them, where 25,000 went into the WAL at the commit and again at the checkpoint (WAL per
# batch 14.4 -> 5.9 MB; a 100k catch-up's commits and checkpoints ~0.55 -> ~0.42 s of CPU).
BATCH = ROW_GROUP_ROWS
# Up to this many rows go to a table as one INSERT ... VALUES, more as an Arrow batch.
FEW_ROWS = 50
# From this many of those rows on, they go as a list per column instead (`_insert_lists`).
COLUMN_ROWS = 4
# A batch of up to this many events (a turn's catch-up) commits without waiting for the disk
# (`duckdb_files.commit`): the WAL's fsync was a third of a turn's catch-up on a busy disk.
UNSYNCED_EVENTS = FEW_ROWS
# Up to this many existing rows of a table are rewritten by UPDATE, more by DELETE and INSERT.
FEW_UPDATES = 2
# Sealed fields no handler reads, left sealed (a turn's sent prompt: 3-10 KB per turn).
UNREAD_FIELDS = frozenset({"prompt"})
# A long catch-up (a replay, a first follow) checkpoints after about this many events: DuckDB
# holds what is not yet checkpointed in memory, and the WAL grows until the 1 GB threshold
# (duckdb_files.py), which took a 1M-event replay's peak memory to 1.65x the raw pipeline's.
CHECKPOINT_EVENTS = 100_000
# The tension law's liveness rule: a longer stretch without any event is an outage.
GAP = timedelta(hours=24)


# Said by every error that names the event a projection stops at: a read, a write or a turn.
STOPS_HINT = "; `mind doctor` names the event that stops the read model"


class ProjectionError(MindError):
    """Raised when an event cannot be applied; the projector stops before it."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message if position is None else f"{message}{STOPS_HINT}")
        self.position = position  # of the event that stopped it, when one did
        self.reason = message  # without the hint (what `mind doctor` itself shows)


# Sent with a batch's first write: DuckDB takes parameters for the last statement of a call,
# and a statement of its own cost a turn's catch-up one more call (~0.3-1 ms).
BEGIN = "BEGIN TRANSACTION; "
# A small batch (a turn's catch-up) inserts a handful of rows into each of six tables and updates
# the one-row tracking table (and the few tracked terms' counts): DuckDB's optimizer has nothing
# to choose there, and its passes cost ~1.2 of those statements' ~5.6 ms of CPU (a turn's
# statements on a copy of a read model, 8 turns x 40). They run with it off for this connection
# alone (SESSION: other connections keep it), from the batch's first call to its commit's, both
# folded into those calls; a statement that finds rows in a large table (an entity row's UPDATE
# by its key, a DELETE, superseded documents) turns it on first (`_planned`: its WHERE needs
# filter pushdown to use an index or skip row groups). Recall's reads after it are planned.
UNPLANNED = "SET SESSION enable_optimizer = false; "
PLANNED = "RESET SESSION enable_optimizer"


def _decode_until_unreadable(
    batch: Sequence[LedgerRow], opened: Sequence[dict[str, Any]] | None
) -> list[Ev]:
    """The batch's events up to the first whose time cannot be read (a forged or foreign
    event): the projector applies those and stops there, as at any event it cannot apply.
    `opened`: the rows' states as the ledger reader opened them (LedgerReader.open_states);
    without, each state is decoded here (orjson is ~3x json.loads)."""
    events: list[Ev] = []
    append = events.append
    fromisoformat = datetime.fromisoformat
    new = tuple.__new__  # an Ev without NamedTuple's Python-level __new__ (a call an event)
    for i, row in enumerate(batch):
        try:
            topic, stream, raw = row.topic, row.originator_id, row.state
            if topic is None or raw is None or stream is None:
                raise ProjectionError(
                    f"position {row.position} has no event row; run `mind verify`"
                )
            state = orjson.loads(raw) if opened is None else opened[i]
            fields = (
                row.position,
                fromisoformat(state["timestamp"]),
                topic,
                stream,
                row.version or 0,
                row.hash,
                state,
                # SQLite gives bytes already (a copy per event cost ~1% of catch-up);
                # PostgreSQL a view.
                raw if raw.__class__ is bytes else bytes(raw),
            )
        except (KeyError, TypeError, ValueError):
            break
        append(new(Ev, fields))
    return events


def _mark_forgotten(rows: Rows, e: Ev) -> None:
    # A forgotten commitment, thread or knowledge item stays a row (its structure is kept) but
    # leaves every listing of open or usable ones: retrieval never offers "[forgotten]".
    table = _table_of(e.topic)
    row = rows.entities.get(table or "", {}).get(e.stream)
    if row is None:
        return
    if table in ("commitments", "threads"):
        row["status"] = "forgotten"
    elif table == "knowledge":
        row["deleted"] = True


@functools.lru_cache(maxsize=1024)  # a call an event (`_load`): the split once a topic
def _table_of(topic: str) -> str | None:
    parts = topic.split(".")
    return TABLE_OF_KIND.get(parts[1]) if len(parts) > 2 else None


def _initialise(con: duckdb.DuckDBPyConnection) -> None:
    # One transaction: a process killed half-way leaves no tables without their tracking row
    # (which would make the next projector re-apply everything).
    con.execute("BEGIN TRANSACTION")
    create_all(con)
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version VARCHAR)")
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (?)", [current_schema()])
    con.execute("INSERT OR IGNORE INTO tracking (name, position) VALUES (?, 0)", [NAME])
    con.execute("COMMIT")


def _sweep(path: Path) -> None:
    """Remove temporary siblings of `path` left by processes that died (named `.<pid>.tmp`)."""
    for stale in path.parent.glob(f"{path.name}.*.tmp*"):
        pid = stale.name[len(path.name) + 1 :].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            stale.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _create(path: Path) -> None:
    """Create an initialised read model at `path` atomically.

    DuckDB creates its file before writing the header, so a process killed in between left a
    file no later open accepts; building it under a temporary name and linking it into place
    means `path` is either absent or a whole database.
    """
    _sweep(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    con = connect(tmp)
    try:
        _initialise(con)
        checkpoint(con)
    finally:
        close(con)
    if path.exists() and path.stat().st_size == 0:
        path.unlink()
        Path(f"{path}.wal").unlink(missing_ok=True)
    tighten(tmp)  # DuckDB made it with the umask's mode; the link shares the mode
    try:
        os.link(tmp, path)  # never replaces a read model another process just created
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
        Path(f"{tmp}.wal").unlink(missing_ok=True)


# How far a projector in this process has brought each read-model file (by absolute path):
# the events up to there are known to apply. The floor's append guard asks before it would
# catch a read model up again (a turn's own read session holds the file while it appends).
_reached: dict[str, int] = {}


def reached(path: Path) -> int:
    """The furthest ledger position a projector in this process brought `path` to (0: none)."""
    return _reached.get(os.path.abspath(path), 0)


def note_reached(path: Path, position: int) -> None:
    """Note that the events up to `position` apply to the read model at `path` (a projector
    here brought it, or a copy of it, that far)."""
    key = os.path.abspath(path)
    _reached[key] = max(_reached.get(key, 0), position)


def forget_reached(path: Path) -> None:
    """Forget what was noted for the read model at `path`: it was deleted (a mind made again in
    its folder), and the next one starts from nothing."""
    _reached.pop(os.path.abspath(path), None)


class Projector:
    """Owns one DuckDB file read-write; only one process may hold it (see ARCHITECTURE.md)."""

    def __init__(self, path: Path | str, *, summary: bool = True, scratch: bool = False) -> None:
        """`summary` False: no summary beside the file (a replay's file, which is not yet
        anyone's read model: swapped in, the next catch-up writes it). `scratch`: a file
        deleted after use, in a DuckDB instance of its own (`duckdb_files.scratch`), no
        summary."""
        self.path = Path(path) if str(path) != ":memory:" else None
        self._summarised = summary and not scratch and self.path is not None
        # A scratch file is deleted after use: no commit of it waits for the disk (~0.1 s of
        # CPU per 100k events, the kernel's, and the wall time of every batch's fsync).
        self._synced = not scratch
        connect_to = scratch_connection if scratch else connect
        # Kept in memory once read: this process holds the file, so only it moves them.
        self._position: int | None = None
        self._last_time: datetime | None = None  # of the event at `_position`
        # The tracking row's document count and their total length (None: not known).
        self._totals: tuple[int, int] | None = None
        self._tracked: set[str] | None = None  # the terms in `term_counts`, read when needed
        # Their document frequencies as `term_counts` holds them (None: not known), and what
        # the batch being written adds to them (applied once it commits).
        self._df: dict[str, int] | None = None
        self._df_added: dict[str, int] = {}
        # The rows `_load` read, as they were: `_update` writes only what a batch changed.
        self._before: dict[str, dict[str, dict[str, Any]]] = {}
        # The summary (`summary.py`): the position it was last written or read at here (None:
        # not looked at yet), the hash of the event at `_position` when known, and the open
        # commitments when no event since changed a commitment.
        self._summary_at: int | None = None
        self._hash: str | None = None
        self._open_commitments: orjson.Fragment | None = None  # as JSON
        # Reads kept until this projector writes their tables (`kept_reads`).
        self.kept = KeptReads(self.last_time)
        # Whether a batch was committed since the file was opened: the session holding this
        # projector then writes the summary as it closes (`ReadSession`).
        self.moved = False
        # Whether the batch being written is small (its statements unplanned, see UNPLANNED),
        # and whether this connection's optimizer is off now.
        self._lean = False
        self._unplanned = False
        if self.path is None:
            self.con = connect(path)
            _initialise(self.con)
            return
        if not self.path.exists() or self.path.stat().st_size == 0:
            # A zero-byte file is one whose creator died before DuckDB wrote its header (older
            # releases created the file in place); nothing was ever in it.
            remove_summary(self.path)  # of a file that was there before, if any
            _create(self.path)
        self.con = connect_to(self.path)
        if not self._read_state():
            # Read models are disposable: one built for other tables is rebuilt from 0.
            close(self.con)
            self.path.unlink()
            Path(f"{self.path}.wal").unlink(missing_ok=True)
            remove_summary(self.path)
            _create(self.path)
            self.con = connect_to(self.path)
            self._read_state()

    def _read_state(self) -> bool:
        """Read the position, its event's time and the index's totals, in the statement that
        checks the schema (one statement where a turn's start-up took four); False when the
        file was built for other tables."""
        try:
            rows = self.con.execute(
                "SELECT v.version, t.position, t.time, t.docs, t.length "
                "FROM schema_version v LEFT JOIN tracking t ON t.name = ?",
                [NAME],
            ).fetchall()
        except (duckdb.CatalogException, duckdb.BinderException):
            return False
        if len(rows) != 1 or rows[0][0] != current_schema():
            return False
        _, position, time, docs, length = rows[0]
        self._position, self._last_time = int(position or 0), time
        # No row (a process died between creating the tables and their first row): the next
        # batch inserts it with its own counts, so (0, 0) plus those is what it holds.
        self._totals = (int(docs or 0), int(length or 0))
        self._note_reached()
        self._keep_totals()
        return True

    def _keep_totals(self) -> None:
        """Keep the tracking row's totals and position for readers (BM25's N and average
        length, `kept_reads.INDEX_TOTALS`) as this projector wrote them: every batch writes the
        row, so a result read from it would be dropped at each (a statement a turn, ~0.35 ms)."""
        if self._totals is not None and self._position is not None:
            docs, length = self._totals
            self.kept.keep(INDEX_TOTALS, ("tracking",), [(docs, length, self._position)])
        if self._df is not None:  # the tracked terms' frequencies, which most batches move
            self.kept.keep(TRACKED_TERMS, ("term_counts",), list(self._df.items()))

    def _note_reached(self) -> None:
        if self.path is not None and self._position is not None:
            note_reached(self.path, self._position)

    def close(self, *, keep: bool = True) -> None:
        """Release the file (`keep` False: it is deleted next, so it is not checkpointed)."""
        close(self.con, keep=keep)

    def last_time(self) -> datetime | None:
        """The time of the event at `position()` (None: not known)."""
        return self._last_time

    def position(self) -> int:
        """The last ledger position applied."""
        if self._position is None:
            self._read_state()
        return self._position or 0

    def _load(self, events: Sequence[Ev]) -> dict[str, dict[str, dict[str, Any]]]:
        wanted: dict[str, set[str]] = {}
        new: set[str] = set()  # streams created in this batch have no row to load
        for e in events:
            table = _table_of(e.topic)
            if table and e.stream not in new and e.stream not in wanted.get(table, ()):
                if e.version == 1:
                    new.add(e.stream)
                else:
                    wanted.setdefault(table, set()).add(e.stream)
        loaded: dict[str, dict[str, dict[str, Any]]] = {}
        self._before = {}
        for table, streams in wanted.items():
            if len(streams) == 1:  # a turn's catch-up: a key lookup (0.7 against 1.05 ms)
                cur = self.con.execute(f"SELECT * FROM {table} WHERE stream_id = ?", [*streams])
            else:
                cur = self.con.execute(
                    f"SELECT * FROM {table} WHERE stream_id IN (SELECT unnest(?))", [list(streams)]
                )
            names = [d[0] for d in cur.description]
            found = cur.fetchall()
            loaded[table] = {r[0]: dict(zip(names, r, strict=True)) for r in found}
            if len(found) <= FEW_UPDATES:  # only those are rewritten by `_update`
                # Copied whole: a handler that changed a list in place must still be seen.
                self._before[table] = deepcopy(loaded[table])
        return loaded

    def _write(self, events: Sequence[Ev], rows: Rows) -> tuple[int, int] | None:
        """Write the batch's rows and the tracking row; the tracking row's document count and
        total length after it (None: not known)."""
        # Built column by column: the events table is the bulk of every batch. The events'
        # fields transposed at once (an Ev is a tuple), not a comprehension per column.
        positions, times, types, streams, versions, hashes, _, raws = zip(*events, strict=True)
        topics = set(types)  # a batch's few topics: each one's kind and payload rule once
        kinds = {t: t.split(".", 2)[1] for t in topics}
        referring = {t for t in topics if kept_in_ledger(t)}
        columns: dict[str, Sequence[Any]] = {
            "position": positions,
            "time": times,
            "type": types,
            "aggregate_id": streams,
            "aggregate_kind": [kinds[t] for t in types],
            "version": versions,
            "hash": hashes,
            # The stored bytes are canonical JSON already: no need to encode them again (in a
            # batch, Arrow checks them as UTF-8 at once: 25x decoding each in Python).
            # A turn's context and prompts stay in the ledger alone (`ledger_refs`).
            "payload": [
                stored_payload(e.topic, e.position, e.raw) if e.topic in referring else e.raw
                for e in events
            ]
            if referring
            else raws,
        }
        self._insert_columns("events", columns, utf8=("payload",), begin=True)
        for table, by_stream in rows.entities.items():
            existing = [s for s in by_stream if s in rows.loaded.get(table, ())]
            if existing and len(existing) <= FEW_UPDATES:
                self._update(table, [by_stream[s] for s in existing])
                new = [row for s, row in by_stream.items() if s not in rows.loaded[table]]
                if new:
                    self._insert(table, new)
                continue
            if existing:
                self.con.execute(
                    self._planned(f"DELETE FROM {table} WHERE stream_id IN (SELECT unnest(?))"),
                    [existing],
                )
            if by_stream:
                self._insert(table, list(by_stream.values()))
        for table, appended in rows.appended.items():
            self._insert(table, appended)
        # A document indexed and superseded in this batch (a commitment opened and closed) is
        # inserted dead; the UPDATE is for documents of earlier batches (a bulk catch-up's
        # rewrote ~14,000 rows it had just inserted per 100k events).
        first = events[0].position
        superseded = set(rows.superseded)
        added = self._write_index(rows.docs, {p for p in superseded if p >= first})
        if earlier := [p for p in superseded if p < first]:
            # Written in for a few (min/max pruning on the position-ordered docs), a list for many.
            dead = sorted(earlier)
            if len(dead) <= FEW_ROWS:
                listed = ", ".join(map(str, dead))
                self.con.execute(
                    self._planned(f"UPDATE docs SET live = false WHERE position IN ({listed})")
                )
            else:
                self.con.execute(
                    self._planned(
                        "UPDATE docs SET live = false WHERE position IN (SELECT unnest(?))"
                    ),
                    [dead],
                )
        # An UPDATE costs a third of INSERT OR REPLACE; the row is missing only if a process
        # died between creating the tables and their first row (older releases).
        last = events[-1]
        ((updated,),) = self.con.execute(
            "UPDATE tracking SET position = ?, time = ?, docs = docs + ?, "
            "length = length + ?, unsorted = unsorted + ? WHERE name = ?",
            [last.position, last.time, *added, NAME],
        ).fetchall()
        if updated:
            before = self._totals
            return None if before is None else (before[0] + added[0], before[1] + added[1])
        self.con.execute(
            "INSERT INTO tracking VALUES (?, ?, ?, ?, ?, ?)",
            [NAME, last.position, last.time, *added],
        )
        return added[0], added[1]

    def _write_index(
        self, docs: tuple[list[int], list[str], list[str], list[str]], dead: set[int]
    ) -> list[int]:
        """Tokenise the batch's documents and write them and their postings (those at `dead`
        positions already superseded); how many documents, terms with repeats and postings
        were added (the tracking row's counts)."""
        positions, kinds, streams, texts = docs
        if not positions:
            return [0, 0, 0]
        if len(positions) <= FEW_ROWS:  # a turn's few documents: no Arrow, no numpy
            counted = [term_counts(text) for text in texts]
            lengths = [sum(c.values()) for c in counted]
            postings: dict[str, list[Any]] = {"term": [], "position": [], "tf": [], "length": []}
            for position, counts, length in zip(positions, counted, lengths, strict=True):
                postings["term"].extend(counts)
                postings["position"].extend([position] * len(counts))
                postings["tf"].extend(counts.values())
                postings["length"].extend([length] * len(counts))
            columns: dict[str, Any] = postings
            per_term: Mapping[str, int] = Counter(postings["term"])
            doc_lengths: Any = lengths
        else:  # a bulk batch: every text tokenised at once (retrieval/batch_terms.py)
            import numpy as np

            from mindledger.projections.retrieval.batch_terms import postings as batch_postings

            found = batch_postings(texts)
            doc_lengths = found.lengths
            columns = {
                "term": found.terms,
                "position": np.asarray(positions, dtype=np.int64)[found.doc],
                "tf": found.tf.astype(np.int32),
                "length": doc_lengths[found.doc].astype(np.int32),
            }
            per_term = found.counts
            if len(found.tf) <= FEW_ROWS:  # as VALUES: plain Python values
                columns = {n: list(c.tolist()) for n, c in columns.items()}
        self._insert_columns(
            "docs",
            {
                "position": positions,
                "kind": kinds,
                "stream": streams,
                "length": doc_lengths if isinstance(doc_lengths, list) else doc_lengths.tolist(),
                "live": [p not in dead for p in positions] if dead else [True] * len(positions),
            },
        )
        postings_added = len(columns["term"])
        if postings_added:
            self._insert_columns("doc_terms", columns)
            self._count_terms(per_term)
        return [len(positions), int(sum(doc_lengths)), postings_added]

    def _count_terms(self, per_term: Mapping[str, int]) -> None:
        """Add a batch's postings to the tracked terms' document frequencies (a term is
        indexed once per document, so its postings are its documents): `per_term` counts
        each term's postings in the batch."""
        if self._tracked is None:
            self._df = dict(self.con.execute(TRACKED_TERMS).fetchall())
            self._tracked = set(self._df)
        if not self._tracked:
            return
        tracked = self._tracked
        counts = {t: n for t, n in per_term.items() if t in tracked}
        if not counts:
            return
        self._df_added = counts
        if len(counts) > FEW_ROWS:  # a bulk batch: a join, whose cost does not grow per term
            self.con.execute(
                "UPDATE term_counts SET df = df + u.n FROM "
                "(SELECT unnest($t) AS term, unnest($n) AS n) u WHERE term_counts.term = u.term",
                {"t": list(counts), "n": list(counts.values())},
            )
            return
        # A CASE over parameters: the same update as a join cost 2.3 instead of 1.0 ms on a
        # freshly attached 1M-event read model (a turn's batch).
        named: dict[str, Any] = {}
        for i, (term, n) in enumerate(counts.items()):
            named[f"t{i}"], named[f"n{i}"] = term, n
        cases = " ".join(f"WHEN $t{i} THEN $n{i}" for i in range(len(counts)))
        listed = ", ".join(f"$t{i}" for i in range(len(counts)))
        self.con.execute(
            f"UPDATE term_counts SET df = df + CASE term {cases} END WHERE term IN ({listed})",
            named,
        )

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        if len(rows) <= FEW_ROWS:
            names = column_names(table)
            if len(rows) >= COLUMN_ROWS:
                self._insert_lists(table, [[r.get(n) for r in rows] for n in names])
            else:
                self._insert_values(table, [[r.get(n) for n in names] for r in rows])
        else:
            import pyarrow as pa  # only for a batch: a reader's or a turn's few rows need none

            # One conversion of the row dicts to a struct array, a row at a time in Arrow's C++
            # (a key missing is null, as in `from_pylist`): `from_pylist` gathers each column
            # by a Python pass over every row, which cost a third more (entity rows of a
            # 25,000-event batch: 44 against 66 ms).
            struct = pa.array(rows, struct_type(table))
            self._insert_table(table, pa.Table.from_struct_array(struct))

    def _insert_columns(
        self,
        table: str,
        columns: dict[str, Sequence[Any]],
        utf8: tuple[str, ...] = (),
        begin: bool = False,
    ) -> None:
        """Insert columns of values; those named in `utf8` hold UTF-8 bytes for text. `begin`:
        the insert opens the batch's transaction (in its statement)."""
        count = len(next(iter(columns.values())))
        if count <= FEW_ROWS:
            for name in utf8:
                columns[name] = [v.decode() for v in columns[name]]
            if count >= COLUMN_ROWS:
                self._insert_lists(table, [list(c) for c in columns.values()], begin)
            else:
                rows = [list(r) for r in zip(*columns.values(), strict=True)]
                self._insert_values(table, rows, begin)
        else:
            import pyarrow as pa

            for name in utf8:
                columns[name] = pa.array(columns[name], pa.binary()).cast(pa.string())
            self._insert_table(table, pa.table(columns, schema=arrow_schema(table)), begin)

    def _update(self, table: str, rows: list[dict[str, Any]]) -> None:
        # A turn's catch-up rewrites one or two rows (the previous turn's): an UPDATE each is
        # one statement where DELETE and INSERT were two, and it sets only the columns that
        # changed (a turn's outcome: 0.5 against 0.86 ms for all 24).
        before = self._before.get(table, {})
        for row in rows:
            was = before.get(row["stream_id"], {})
            changed = [n for n in column_names(table) if row.get(n) != was.get(n)]
            names = [n for n in changed if n != "stream_id"]
            if names:
                self.con.execute(
                    self._planned(
                        f"UPDATE {table} SET {', '.join(f'{n} = ?' for n in names)} "
                        "WHERE stream_id = ?"
                    ),
                    [row.get(n) for n in names] + [row["stream_id"]],
                )

    def _opening(self, begin: bool) -> str:
        """What the batch's first call sends before its insert (its transaction opens there,
        and a small batch's statements go unplanned from there: UNPLANNED)."""
        if not begin:
            return ""
        if not self._lean:
            return BEGIN
        self._unplanned = True
        return UNPLANNED + BEGIN

    def _planned(self, sql: str) -> str:
        """`sql` with the optimizer back on first when the batch's statements went without it
        (for one that finds rows in a large table: UNPLANNED)."""
        if not self._unplanned:
            return sql
        self._unplanned = False
        return f"{PLANNED}; {sql}"

    def _insert_values(self, table: str, rows: list[list[Any]], begin: bool = False) -> None:
        # A turn's catch-up writes a handful of rows to each of several tables: one VALUES
        # statement costs ~0.3 ms where registering an Arrow batch costs ~1.4 ms.
        width = len(rows[0])
        one = "(" + ", ".join(["?"] * width) + ")"
        self.con.execute(
            f"{self._opening(begin)}INSERT INTO {table} VALUES " + ", ".join([one] * len(rows)),
            [v for r in rows for v in r],
        )

    def _insert_lists(self, table: str, columns: list[list[Any]], begin: bool = False) -> None:
        # DuckDB binds each parameter of a statement (~7 us each): a list per column, zipped
        # back into rows by unnest, is a parameter per column, not per value (a turn's 12
        # postings 0.52 -> 0.35 ms, its 5 events 0.57 -> 0.47; 2-3 rows gain nothing). A
        # list's values take one type, then the column's, as a VALUES column's do.
        unnest = ", ".join(["unnest(?)"] * len(columns))
        self.con.execute(f"{self._opening(begin)}INSERT INTO {table} SELECT {unnest}", columns)

    def _insert_table(self, table: str, data: pa.Table, begin: bool = False) -> None:
        arrow_scans()
        self.con.register("_batch", data)
        try:
            self.con.execute(f"{self._opening(begin)}INSERT INTO {table} SELECT * FROM _batch")
        finally:
            self.con.unregister("_batch")

    def apply(
        self, batch: Sequence[LedgerRow], opened: Sequence[dict[str, Any]] | None = None
    ) -> int:
        """Apply a batch in one transaction; on a failing event, commit those before it and stop.
        `opened`: the rows' states as the reader opened them (sealed fields in the clear)."""
        if not batch:
            return 0
        events = _decode_until_unreadable(batch, opened)
        if len(events) < len(batch):  # an event with no readable time stops projection there
            if events:
                self.apply(batch[: len(events)], None if opened is None else opened[: len(events)])
            bad = batch[len(events)]
            raise ProjectionError(
                f"cannot apply event at position {bad.position} ({bad.topic}): it has no "
                "readable timestamp",
                bad.position,
            )
        expected = self.position() + 1
        if events[0].position != expected:
            raise ProjectionError(
                f"the read model is at {expected - 1} but the next event is at "
                f"{events[0].position}; rebuild it with `mind replay --swap`"
            )
        # The reads and the handlers come before the transaction (this process holds the file:
        # nothing else writes it), which its first write opens (`BEGIN`): a statement less.
        begun = False
        try:
            rows = Rows(self._load(events))
            failure: ProjectionError | None = None
            applied = len(events)
            for i, e in enumerate(events):
                handler = HANDLERS.get(e.topic)
                try:
                    if handler is None:
                        raise KeyError(f"no handler for event type {e.topic}")
                    handler(rows, e)
                    if e.state.get(FORGOTTEN_MARK):
                        _mark_forgotten(rows, e)
                except Exception as exc:  # a projection boundary: stop, never skip
                    failure = ProjectionError(
                        f"cannot apply event at position {e.position} ({e.topic}): {exc}",
                        e.position,
                    )
                    applied = i
                    break
            if failure is not None:
                if applied:
                    self.apply(batch[:applied], None if opened is None else opened[:applied])
                raise failure
            self._note_gaps(events, rows)
            begun = True
            self._df_added = {}
            self._lean = len(events) <= UNSYNCED_EVENTS
            totals = self._write(events, rows)
            commit(
                self.con,
                synced=self._synced and len(events) > UNSYNCED_EVENTS,
                then=PLANNED if self._unplanned else "",
            )
            self._unplanned = False
            self.kept.written(written_by(rows))
            self.moved = True
            self._hash = events[-1].hash
            if rows.entities.get("commitments"):
                self._open_commitments = None  # listed again for the summary
            if self.path is not None:
                tighten(f"{self.path}.wal")  # DuckDB made it anew, with the umask's mode
            self._position, self._last_time = events[-1].position, events[-1].time
            self._totals = totals
            if self._df is not None:
                for term, n in self._df_added.items():
                    self._df[term] += n
            self._note_reached()
            self._keep_totals()
        except ProjectionError:
            raise
        except BaseException:
            self._position = self._last_time = self._totals = None
            self._tracked = self._df = None  # read again: the batch's counts may be in or not
            self.kept.written()
            if begun:
                with contextlib.suppress(duckdb.TransactionException):  # none opened yet
                    self.con.execute("ROLLBACK")
            raise
        finally:
            if self._unplanned:  # a write or the commit failed with the optimizer off
                self._unplanned = False
                with contextlib.suppress(duckdb.Error):
                    self.con.execute(PLANNED)
        return applied

    def _note_gaps(self, events: Sequence[Ev], rows: Rows) -> None:
        """Record stretches of more than a day with no event (liveness, for the tension law)."""
        previous = self._last_time
        if previous is None:
            # fetchall: a result left unfinished blocks the next register() on this connection.
            found = self.con.execute(
                "SELECT time FROM events WHERE position = ?", [events[0].position - 1]
            ).fetchall()
            previous = found[0][0] if found else None
        for e in events:
            if previous is not None and e.time - previous > GAP:
                rows.append(
                    "liveness_gaps",
                    {"position": e.position, "gap_start": previous, "gap_end": e.time},
                )
            previous = e.time

    def sort_index(self) -> None:
        """Sort the term index once enough of it is unsorted (`maintenance.sort_term_index`)."""
        try:
            sort_term_index(self.con)
        finally:
            self._tracked = self._df = None  # the sort recounts the tracked terms
            self.kept.written(WRITTEN_EVERY_BATCH)
            self._keep_totals()  # the sort leaves them as they were

    def refresh_tension(self) -> None:
        """Write each thread's tension as of the last projected event's time."""
        refresh_tension(self.con)
        self.kept.written(("threads",))

    def apply_read(self, reader: LedgerReader, rows: Sequence[LedgerRow]) -> int:
        """`apply` rows `reader` read, their sealed fields opened by it (a reader without
        `open_states` is one of tests' fakes, whose rows are stored unsealed)."""
        opener = getattr(reader, "open_states", None)
        if opener is None or not rows:
            return self.apply(rows)
        return self.apply(rows, opener(rows, UNREAD_FIELDS))

    def catch_up(
        self,
        reader: LedgerReader,
        stop: int | None = None,
        batch: int = BATCH,
        on_batch: Callable[[int], None] | None = None,
        maintain: bool = False,
    ) -> int:
        """Apply everything after the current position (up to `stop`); returns how many.
        `maintain` (the follower, `mind project`, replay) also rewrites the threads' tension
        column and sorts the term index when enough of it is unsorted; the catch-ups of
        readers and turns skip both (they cost time in proportion to the mind's size)."""
        total = unsaved = 0
        rows = reader.rows(after=self.position(), batch=batch, stop=stop)
        with paused_gc(), contextlib.ExitStack() as bulk:
            while chunk := list(islice(rows, batch)):
                if len(chunk) > FEW_ROWS and not total:  # a bulk catch-up (`one_thread`)
                    bulk.enter_context(one_thread(self.con))
                applied = self.apply_read(reader, chunk)
                total, unsaved = total + applied, unsaved + applied
                if unsaved >= CHECKPOINT_EVENTS:
                    # Between two batches' transactions: what is applied is committed already.
                    checkpoint(self.con)
                    unsaved = 0
                if on_batch:
                    on_batch(len(chunk))
            # The summary too: listing a large mind's open commitments makes an object a
            # value, and with the collector back on they cost a third more.
            self.summarise()
        if total and maintain:  # after the summary: neither moves the position or a listing
            self.refresh_tension()
            self.sort_index()
        return total

    def summarise(self) -> None:
        """Write the summary when it is not at this file's position (after events applied, or
        none written yet). A summary that cannot be written is deleted: its readers then read
        the read model itself, and the catch-up stands."""
        if not self._summarised or self.path is None:
            return
        position = self.position()
        try:
            if self._summary_at is None:  # the first look here: is the one there this file's?
                found = read_summary(self.path) or {}
                seen = [found.get("position"), found.get("hash"), found.get("schema")]
                mine = [position, self._position_hash(), current_schema()]
                same = seen == mine and vouches_for(found, self.path)
                self._summary_at = position if same else -1
            if self._summary_at == position:
                return
            if self._open_commitments is None:
                from mindledger.projections.queries.listings import open_commitments_json

                self._open_commitments = orjson.Fragment(open_commitments_json(self.con))
            digest = self._position_hash()
            write_summary(self.path, current_schema(), position, digest, self._open_commitments)
            self._summary_at = position
        except (OSError, TypeError, ValueError, duckdb.Error):
            self._summary_at = None
            with contextlib.suppress(OSError):
                remove_summary(self.path)

    def _position_hash(self) -> str | None:
        """The ledger hash of the event at `position()` (None before any)."""
        if self._hash is None:
            row = self.con.execute(
                "SELECT hash FROM events WHERE position = ?", [self.position()]
            ).fetchall()
            self._hash = row[0][0] if row else None
        return self._hash

    def publish(self, target: Path) -> None:
        """Copy a consistent snapshot for read-only readers, replacing the old one atomically."""
        assert self.path is not None
        checkpoint(self.con)
        _sweep(target)
        tmp = target.with_name(target.name + f".{os.getpid()}.tmp")
        # Made 0600 first: copyfile then truncates it and keeps its mode (and its fast path).
        tmp.unlink(missing_ok=True)
        try:
            create_private_file(tmp)
            shutil.copyfile(self.path, tmp)
            os.replace(tmp, target)
        except BaseException:
            # A copy cut short (a full disk) is a file as large as the room it found: a later
            # command on that disk needs the room more than a sweep that comes at the next publish.
            tmp.unlink(missing_ok=True)
            raise


def table_names() -> list[str]:
    """Every read-model table."""
    return list(TABLES)
