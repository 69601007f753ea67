"""The vector projection's file: MIND_HOME/vectors.sqlite holds one embedding per stored item
(a message, a knowledge item's question, a window of consecutive messages: kind `window`,
keyed by its first message, its members in `windows`), by the item's ledger position, and the
position up to which every item is embedded, for one embedding model.

It is written by the vector projector alone (`mindledger/vector_projection.py`: a background
stage of `mind serve` and of `mind project --follow`, or `mind project --vectors`), never on a
turn's path; recall reads it (`StoredVectors`) and embeds only the query. SQLite, not DuckDB: a
reader opens it while the projector writes (WAL), which a DuckDB file does not allow.

Derived data, like the read model: deleted, it is rebuilt from position 0 (`rebuild`); a new
`embedding.model` starts it again. Rows are keyed by position, never by text, so the file
confirms no guess of a text; `keep_only` rewrites it with the positions a read model still
shows in the clear (a forget), so no page of a forgotten item's vector survives, nor of a
window's that held it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindledger.domain.private_files import create_private_file

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
FILE = "vectors.sqlite"
VERSION = 4  # the file's layout (PRAGMA user_version); 3 added windows, 4 a rowid table
_CHUNK = 500  # positions per IN (...) list


class VectorStore:
    """One vectors.sqlite, opened for reading and writing (`check_same_thread` off: a served
    mind reads it from request threads, each call is one statement or one transaction)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        create_private_file(path)  # vectors say what was said; SQLite's journals follow
        self.con = sqlite3.connect(path, check_same_thread=False, timeout=30.0)
        # Derived data: a batch lost in a crash is embedded again (its position was not kept).
        self.con.execute("PRAGMA journal_mode = WAL")
        self.con.execute("PRAGMA synchronous = NORMAL")
        self.con.execute("PRAGMA secure_delete = ON")  # a deleted row's bytes are zeroed
        with self.con:
            if self.con.execute("PRAGMA user_version").fetchone()[0] != VERSION:
                # Another layout (an earlier one): derived data, so started again from 0.
                self.con.execute("DROP TABLE IF EXISTS items")
                self.con.execute("DROP TABLE IF EXISTS tracking")
                self.con.execute("DROP TABLE IF EXISTS windows")
                self.con.execute("DROP TABLE IF EXISTS recut")
                self.con.execute(f"PRAGMA user_version = {VERSION}")
            # By kind, then position: a kind's latest rows are one range of the index, and
            # another index (a spans channel's windows, by their first message) adds a kind.
            # A rowid table, not WITHOUT ROWID: an index b-tree keeps at most ~1 KB of a row
            # on its 4 KB page and spills the rest of a 1.5 KB vector to an overflow page of
            # its own (4.7 KB of file a vector); a table's leaf holds two whole rows a page.
            self.con.execute(
                "CREATE TABLE IF NOT EXISTS items (kind TEXT, position INTEGER, vector BLOB, "
                "UNIQUE (kind, position))"
            )
            self.con.execute(
                "CREATE TABLE IF NOT EXISTS tracking (id INTEGER PRIMARY KEY CHECK (id = 1), "
                "model TEXT, position INTEGER)"
            )
            # A window's members (positions, comma-separated), by its first: what recall lifts
            # and what a forget checks (a window holding a forgotten message goes).
            self.con.execute(
                "CREATE TABLE IF NOT EXISTS windows (position INTEGER PRIMARY KEY, members TEXT)"
            )
            # Where the windows are to be cut again from (a forget dropped some after it).
            self.con.execute(
                "CREATE TABLE IF NOT EXISTS recut (id INTEGER PRIMARY KEY CHECK (id = 1), "
                "position INTEGER)"
            )

    def close(self) -> None:
        self.con.close()

    def tracked(self) -> tuple[str | None, int]:
        """The model the vectors are of and the position every item up to is embedded."""
        row = self.con.execute("SELECT model, position FROM tracking").fetchone()
        return (None, 0) if row is None else (str(row[0]), int(row[1]))

    def position(self, model: str) -> int:
        """How far `model`'s vectors reach (0 when the file holds another model's, or none)."""
        found, position = self.tracked()
        return position if found == model else 0

    def reset(self, model: str) -> None:
        """Empty the file and start it over for `model` (a rebuild, or a new model)."""
        with self.con:
            self.con.execute("DELETE FROM items")
            self.con.execute("DELETE FROM windows")
            self.con.execute("DELETE FROM recut")
            self.con.execute("INSERT OR REPLACE INTO tracking VALUES (1, ?, 0)", (model,))

    def add(
        self,
        model: str,
        rows: list[tuple[int, str]],
        vectors: Matrix,
        position: int,
        members: dict[int, tuple[int, ...]] | None = None,
        dropped: Iterable[int] = (),
    ) -> None:
        """Keep `vectors` (one per (position, kind) row, in order; a `window` row's `members`
        by its position), drop the windows first at `dropped`, and move the tracked position
        to `position`, in one transaction."""
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32)
        with self.con:
            for first in dropped:
                self.con.execute(
                    "DELETE FROM items WHERE kind = 'window' AND position = ?", [first]
                )
                self.con.execute("DELETE FROM windows WHERE position = ?", [first])
            self.con.executemany(
                "INSERT OR REPLACE INTO items VALUES (?, ?, ?)",
                [(k, p, v.tobytes()) for (p, k), v in zip(rows, vectors, strict=True)],
            )
            self.con.executemany(
                "INSERT OR REPLACE INTO windows VALUES (?, ?)",
                [(p, _joined(m)) for p, m in (members or {}).items()],
            )
            self.con.execute("INSERT OR REPLACE INTO tracking VALUES (1, ?, ?)", (model, position))

    def windows_from(self, first: int) -> dict[int, tuple[int, ...]]:
        """The stored windows first at or after `first`, their members by their first."""
        found = self.con.execute(
            "SELECT position, members FROM windows WHERE position >= ?", [first]
        ).fetchall()
        return {int(p): _split(m) for p, m in found}

    def recut_from(self) -> int | None:
        """Where a forget asks the windows to be cut again from (None: nowhere)."""
        row = self.con.execute("SELECT position FROM recut").fetchone()
        return None if row is None else int(row[0])

    def recut_done(self) -> None:
        with self.con:
            self.con.execute("DELETE FROM recut")

    def last_window(self) -> int | None:
        """The greatest first position of a stored window (None: no window yet)."""
        row = self.con.execute("SELECT max(position) FROM windows").fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def count(self) -> int:
        return int(self.con.execute("SELECT count(*) FROM items").fetchone()[0])

    def vectors(self, kind: str, positions: list[int]) -> tuple[list[int], Matrix]:
        """Of `positions` (items of `kind`), those embedded, and their vectors as rows (in the
        order given)."""
        return _read_vectors(self.con, kind, positions)

    def all_rows(self) -> dict[tuple[str, int], bytes]:
        """Every vector by (kind, position) as stored (for checks)."""
        rows = self.con.execute("SELECT kind, position, vector FROM items").fetchall()
        return {(str(k), int(p)): bytes(v) for k, p, v in rows}


def _read_vectors(
    con: sqlite3.Connection, kind: str, positions: list[int]
) -> tuple[list[int], Matrix]:
    return _as_matrix(positions, _read_rows(con, kind, positions))


def _read_rows(con: sqlite3.Connection, kind: str, positions: list[int]) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    for start in range(0, len(positions), _CHUNK):
        part = positions[start : start + _CHUNK]
        marks = ",".join("?" * len(part))
        found.update(
            con.execute(
                f"SELECT position, vector FROM items WHERE kind = ? AND position IN ({marks})",
                [kind, *part],
            ).fetchall()
        )
    return found


def _as_matrix(positions: list[int], found: dict[int, bytes]) -> tuple[list[int], Matrix]:
    import numpy as np

    kept = [p for p in positions if p in found]
    if not kept:
        return [], np.zeros((0, 0), dtype=np.float32)
    blob = b"".join(found[p] for p in kept)
    return kept, np.frombuffer(blob, dtype=np.float32).reshape(len(kept), -1)


def _copy_items(con: sqlite3.Connection, kinds: str, positions: list[int]) -> None:
    """Copy the attached `old` file's items of `kinds` (an SQL condition) at `positions`."""
    for start in range(0, len(positions), _CHUNK):
        part = positions[start : start + _CHUNK]
        marks = ",".join("?" * len(part))
        con.execute(
            f"INSERT INTO items SELECT * FROM old.items WHERE {kinds} AND position IN ({marks})",
            part,
        )


def _ask_recut(con: sqlite3.Connection, kept: list[int], layout: int) -> None:
    """After a forget dropped windows, where the projection cuts them again from: the last
    window kept before the first dropped (a window start the forget left as it was; 0 when
    none), or an earlier place another forget asked for."""
    if not layout:
        return
    old = {int(p) for (p,) in con.execute("SELECT position FROM old.windows")}
    dropped = old - set(kept)
    if not dropped:
        con.execute("INSERT INTO recut SELECT * FROM old.recut")
        return
    first = min(dropped)
    since = max((p for p in kept if p < first), default=0)
    asked = con.execute("SELECT position FROM old.recut").fetchone()
    if asked is not None:
        since = min(since, int(asked[0]))
    con.execute("INSERT INTO recut VALUES (1, ?)", [since])


def _joined(members: tuple[int, ...]) -> str:
    return ",".join(map(str, members))


def _split(members: str) -> tuple[int, ...]:
    return tuple(int(p) for p in members.split(",") if p)


def _members_of(con: sqlite3.Connection, firsts: list[int]) -> dict[int, tuple[int, ...]]:
    found: dict[int, tuple[int, ...]] = {}
    for start in range(0, len(firsts), _CHUNK):
        part = firsts[start : start + _CHUNK]
        marks = ",".join("?" * len(part))
        found.update(
            (int(p), _split(m))
            for p, m in con.execute(
                f"SELECT position, members FROM windows WHERE position IN ({marks})", part
            )
        )
    return found


def tracked_at(path: Path) -> tuple[str | None, int]:
    """The model and position the file at `path` tracks ((None, 0): no file, or unreadable),
    read with the standard library only: a recall with nothing embedded yet imports no numpy
    and embeds no query."""
    if not path.exists():
        return None, 0
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT model, position FROM tracking").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None, 0
    return (None, 0) if row is None else (str(row[0]), int(row[1]))


# The windows `StoredVectors.latest` read, by file, kind and bounds, with the file's version.
_windows: dict[tuple[str, str, int, int], tuple[tuple[int, str, int], list[int], Any]] = {}
_windows_lock = threading.Lock()
WINDOWS_KEPT = 8  # ~3 MB each at 2,000 vectors of 384


class _Rows:
    """The rows `StoredVectors.stored` read from one file for one kind, kept in this process:
    a position's vector never changes while the file (its inode and creation) and the model
    stay, and the projection only adds positions past the one it tracks, so a row read once
    holds across its passes, and a position absent at or below the tracked one stays absent.
    A forget replaces the file (another inode): everything read before is dropped."""

    def __init__(self, ident: tuple[int, int, str], position: int) -> None:
        self.ident, self.position = ident, position
        self.rows: dict[int, bytes] = {}
        self.absent: set[int] = set()
        # The last few matrices put together, by the positions asked (all of them read or
        # known absent): a named speaker's 2,000 rows joined again cost ~2 ms a recall.
        self.matrices: dict[tuple[int, ...], tuple[list[int], Matrix]] = {}


# By file and kind. At 2,000 vectors per named speaker, random reads of a 100k-item file cost
# ~13 ms of CPU a recall (B-tree seeks for rows of 1.5 KB); kept, a recall reads only what the
# projection added since (bench/recall.py).
_rows_kept: dict[tuple[str, str], _Rows] = {}
_rows_lock = threading.Lock()
# Kinds whose row at a position is never written again (a window's may be cut again).
KEPT_KINDS = frozenset({"message"})
# Per file and kind (~31 MB at 384 dimensions): ten named pairs' 2,000 latest messages each.
ROWS_KEPT = 20_000
FILES_KEPT = 4
MATRICES_KEPT = 16  # ~3 MB each at 2,000 vectors of 384


class StoredVectors:
    """Recall's vectors: the stored items' read from the vector projection's file, only the
    query's embedded now (by `query`: texts -> float32 matrix, or an embedder with `matrix`),
    once per recall however many channels ask. A callable texts -> vectors like any `Embed`,
    with `stored(kind, positions)` and `latest(kind, upto, limit)` besides."""

    def __init__(self, path: Path, model: str, query: Any) -> None:
        self.path, self.model, self.query = str(path), model, query
        self.lock = threading.Lock()
        self.asked: dict[str, Any] = {}  # the query's vector, for the other channels
        self.con: sqlite3.Connection | None = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, check_same_thread=False
        )
        self.position, self.inode, self.born = 0, 0, 0
        try:
            found_stat = os.stat(path)
            self.inode = found_stat.st_ino  # a forget replaces the file: a new inode
            # With it: an inode number freed by one forget may be given to the next file.
            self.born = found_stat.st_ctime_ns
            found = self.con.execute("SELECT model, position FROM tracking").fetchone()
            if found is not None and found[0] == model:
                self.position = int(found[1])
        except (OSError, sqlite3.Error):
            self.close_store()

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self.matrix(texts)]

    def matrix(self, texts: list[str]) -> Matrix:
        import numpy as np

        with self.lock:  # the channels ask from two threads: the second waits for the first
            missing = [t for t in dict.fromkeys(texts) if t not in self.asked]
            if missing:
                rows = getattr(self.query, "matrix", self.query)(missing)
                self.asked.update(zip(missing, np.asarray(rows, dtype=np.float32), strict=True))
            return np.stack([self.asked[t] for t in texts])

    def stored(self, kind: str, positions: list[int]) -> tuple[list[int], Matrix]:
        """Of `positions` (items of `kind`), those embedded, and their vectors as rows (in the
        order given)."""
        if self.con is None or self.position == 0 or not positions:
            import numpy as np

            return [], np.zeros((0, 0), dtype=np.float32)
        if kind not in KEPT_KINDS:
            with self.lock:
                return _read_vectors(self.con, kind, positions)
        key, ident = (self.path, kind), (self.inode, self.born, self.model)
        asked = tuple(positions)
        with _rows_lock:
            known = _rows_kept.get(key)
            if known is None or known.ident != ident or known.position > self.position:
                if len(_rows_kept) >= FILES_KEPT:
                    _rows_kept.clear()
                known = _rows_kept[key] = _Rows(ident, self.position)
            made = known.matrices.get(asked)
            if made is not None:
                return list(made[0]), made[1]
            rows, absent = known.rows, known.absent
            missing = [p for p in positions if p not in rows and p not in absent]
            found = {p: rows[p] for p in positions if p in rows}
        if missing:
            with self.lock:
                read = _read_rows(self.con, kind, missing)
            found.update(read)
            with _rows_lock:
                known.rows.update(read)
                if len(known.rows) > ROWS_KEPT:  # the first read go first
                    for p in list(known.rows)[: len(known.rows) - ROWS_KEPT]:
                        del known.rows[p]
                if len(known.absent) > ROWS_KEPT:
                    known.absent.clear()
                # Past the position this recall saw, an item may be embedded by now.
                known.absent.update(p for p in missing if p not in read and p <= self.position)
                known.position = max(known.position, self.position)
        kept, matrix = _as_matrix(positions, found)
        with _rows_lock:
            if all(p in found or p in known.absent for p in positions):
                if len(known.matrices) >= MATRICES_KEPT:
                    known.matrices.clear()
                known.matrices[asked] = (kept, matrix)
        return list(kept), matrix

    def latest(self, kind: str, upto: int, limit: int) -> tuple[list[int], Matrix]:
        """The last `limit` embedded items of `kind` at or before `upto`, latest first, and
        their vectors: one range read of the file, kept in this process while the file and its
        position stay the same (a served mind's recalls between two passes read it once)."""
        import numpy as np

        if self.con is None or self.position == 0:
            return [], np.zeros((0, 0), dtype=np.float32)
        key = (self.path, kind, upto, limit)
        version = (self.inode, self.model, self.position)
        with _windows_lock:
            kept = _windows.get(key)
        if kept is not None and kept[0] == version:
            return kept[1], kept[2]
        with self.lock:
            rows = self.con.execute(
                "SELECT position, vector FROM items WHERE kind = ? AND position <= ? "
                "ORDER BY position DESC LIMIT ?",
                (kind, upto, limit),
            ).fetchall()
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        blob = b"".join(v for _, v in rows)
        positions = [int(p) for p, _ in rows]
        matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1)
        with _windows_lock:
            if len(_windows) >= WINDOWS_KEPT:
                _windows.clear()
            _windows[key] = (version, positions, matrix)
        return positions, matrix

    def members(self, firsts: list[int]) -> dict[int, tuple[int, ...]]:
        """The members of the stored windows first at `firsts` (by first)."""
        if self.con is None or not firsts:
            return {}
        with self.lock:
            return _members_of(self.con, firsts)

    def close_store(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def close(self) -> None:
        """Release both files now (a forget replaces them)."""
        self.close_store()
        close = getattr(self.query, "close", None)
        if close is not None:
            close()


def keep_only(path: Path, positions: Iterable[int]) -> int:
    """Rewrite the file at `path` into a new one holding only the rows of `positions` (what a
    read model still shows in the clear after a forget) and the windows whose every member is
    among them, with the same tracked position, and put it in place: no page of the old file
    survives. How many rows were kept (0, nothing written, when there is no file)."""
    if not path.exists():
        return 0
    wanted = sorted(set(positions))
    tmp = path.with_name(f"{path.name}.{os.getpid()}.keep")
    for leftover in _files_of(tmp):
        leftover.unlink(missing_ok=True)
    new = VectorStore(tmp)
    try:
        new.con.execute("ATTACH DATABASE ? AS old", (str(path),))
        with new.con:
            new.con.execute("INSERT OR REPLACE INTO tracking SELECT * FROM old.tracking")
            _copy_items(new.con, "kind != 'window'", wanted)
            clear = set(wanted)
            layout = new.con.execute(
                "SELECT count(*) FROM old.sqlite_master WHERE name = 'windows'"
            ).fetchone()[0]
            windows = [
                (int(p), str(m))
                for p, m in (
                    new.con.execute("SELECT position, members FROM old.windows") if layout else []
                )
                if all(member in clear for member in _split(m))
            ]
            new.con.executemany("INSERT INTO windows VALUES (?, ?)", windows)
            _ask_recut(new.con, [p for p, _ in windows], layout)
            _copy_items(new.con, "kind = 'window'", [p for p, _ in windows])
        new.con.execute("DETACH DATABASE old")
        new.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        kept = new.count()
    finally:
        new.close()
    for stale in _files_of(path)[1:]:  # the old file's journals, not the file itself
        stale.unlink(missing_ok=True)
    for journal in _files_of(tmp)[1:]:
        journal.unlink(missing_ok=True)
    os.replace(tmp, path)
    return kept


def _files_of(path: Path) -> list[Path]:
    return [path, *(path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))]
