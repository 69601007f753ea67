"""Opening and closing read-model files: one DuckDB instance per process, files attached to it.

Starting a DuckDB instance costs ~14 ms (its thread pool and catalog), and shutting one down
after writes as much again; attaching a file to a running instance costs ~1.5 ms. A turn opens
its read model once or twice, so a long-lived process (chat, a program embedding the runtime,
the follower) paid ~30 ms per turn for instances alone. A detached file is closed and its lock
released to other processes; its WAL is checkpointed once it is large enough (`close`), and
whoever attaches it next replays the rest, as DuckDB does after a crash.

Our modules import DuckDB's engine (`_duckdb`, the compiled module the `duckdb` package
re-exports: the same connection class, exceptions and `connect`), not the `duckdb` package,
whose Python layer (relations, expressions, its version lookup through `importlib.metadata`)
cost a one-shot command ~25 ms of CPU, about `python -c pass` again, for nothing we call: we
send SQL text. Only a scan of a Python object (a registered Arrow batch) needs the package,
which sets the engine's Arrow sources up when imported: `arrow_scans` first.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from pathlib import Path

import _duckdb as duckdb  # the engine without its Python layer (see above)

from mindledger.domain.errors import ReadModelCorruptError
from mindledger.domain.private_files import tighten

_guard = threading.Lock()
_instance: duckdb.DuckDBPyConnection | None = None
_owner = 0  # the pid that started the instance: a forked child starts its own
_aliases = itertools.count(1)
ALIAS_PREFIX = "readmodel_"
# id(connection) -> the connection, its alias, file, read-only. The entry holds the connection
# itself: an id is reused once its object is freed, and a `close` of another connection (a
# `:memory:` one) at that id popped a stale entry and detached a file it never held.
_attached: dict[int, tuple[duckdb.DuckDBPyConnection, str, Path, bool]] = {}
# A turn's writes add ~56 KB of WAL, which the next attach replays (~1.5 ms per turn's worth),
# while a checkpoint costs ~8 ms at 1k events and ~17 at 1M: checkpointing every third or fourth
# turn was cheapest (mean turn at 1k: 49.1 ms at 64 KB, 46.9 at 192 KB, 48.9 at 512 KB).
WAL_CHECKPOINT_BYTES = 192 * 1024
# Row groups of 32,768 rows instead of DuckDB's 122,880: a term's postings are found by the
# min/max of the sorted term index's row groups, and each lookup scans whole row groups, so at
# 1M events one term's postings took ~2.2 ms and now ~1.0 (BM25 of a turn's message 11.3 ->
# 8.7 ms); the file grows ~18% (worse compression), catch-up measured the same. DuckDB applies
# the size per attach (a checkpoint merges smaller groups into its own size), so every writing
# attach passes it.
ROW_GROUP_ROWS = 32_768


# What DuckDB says when a file's bytes are damaged, measured on the DuckDB this project pins: a
# flipped block ("Corrupt database file: computed checksum ..."), a garbled statistics block
# ("Serialization Error: ..."), a file cut short ("Could not read enough bytes ..."), an empty
# or foreign file ("... not a valid DuckDB database file"). A permission or disk error is not
# damage: the file is fine and rebuilding it would not help.
DAMAGE_SIGNS = (
    "Corrupt database file",
    "Serialization Error",
    "Could not read enough bytes",
    "not a valid DuckDB database file",
)


def damaged(e: BaseException) -> bool:
    """Whether `e` says a read-model file's bytes are damaged (it is rebuilt, never patched)."""
    if isinstance(e, ReadModelCorruptError):
        return True
    return isinstance(e, duckdb.Error) and any(sign in str(e) for sign in DAMAGE_SIGNS)


def arrow_scans() -> None:
    """Make the engine able to scan a registered Arrow batch (`con.register`): importing the
    `duckdb` package sets its Arrow sources up, once a process (without, DuckDB refuses the
    scan: "Python Arrow objects cannot be scanned")."""
    import duckdb  # noqa: F401


def _hub() -> duckdb.DuckDBPyConnection:
    global _instance, _owner
    with _guard:
        if _instance is None or _owner != os.getpid():
            _instance = duckdb.connect(":memory:")
            # A batch writes more than the default 16 MB of WAL, so every commit also
            # checkpointed; checkpointing per GB instead took catch-up from 39.8k to 49.9k
            # events/s at 400k events. Publishing and closing checkpoint explicitly, and the
            # WAL is replayed after a crash, so nothing committed is lost either way.
            _instance.execute("SET checkpoint_threshold = '1GB'")
            # Closing checkpoints only once the WAL is worth it (see `close`).
            _instance.execute("PRAGMA disable_checkpoint_on_shutdown")
            _owner = os.getpid()
        return _instance


def purge_in_background() -> None:
    """DuckDB's allocator (jemalloc, statically linked on Linux) hands the pages it freed back
    to the system from a background thread, about a second after they were freed. Without,
    it purges only while it allocates again: in a served soak, its resident memory grew from
    30 to 75 MB while what it had allocated stayed at 10-40 MB. For a long-lived process (the
    server); the setting is global to the process."""
    _hub().execute("SET allocator_background_threads = true")


# DuckDB draws a progress bar on stdout for queries over two seconds, which would corrupt the
# JSON of any command. Only registered Arrow batches may be scanned, never a Python variable
# that happens to share a table's name. One statement string: every recall sets them again on
# its second connection (`sibling`).
SETTINGS = "SET enable_progress_bar = false; SET python_enable_replacements = false"


def _settings(con: duckdb.DuckDBPyConnection, before: str = "") -> duckdb.DuckDBPyConnection:
    con.execute(f"{before}{SETTINGS}")
    return con


def connect(path: Path | str = ":memory:", read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection whose default database is the file at `path` (close it with `close`).

    `:memory:` gives a private in-memory database (for comparing attached files)."""
    if str(path) == ":memory:":
        return _settings(duckdb.connect(":memory:"))
    con = _hub().cursor()
    alias = f"{ALIAS_PREFIX}{next(_aliases)}"
    quoted = str(path).replace("'", "''")
    try:
        options = "READ_ONLY" if read_only else f"ROW_GROUP_SIZE {ROW_GROUP_ROWS}"
        try:
            con.execute(f"ATTACH '{quoted}' AS {alias} ({options})")
        except duckdb.IOException as e:
            # A read model is derived: a damaged file is rebuilt from the ledger, never patched.
            if "not a valid DuckDB database file" not in str(e):
                raise
            raise ReadModelCorruptError(
                f"the read model {path} is damaged (not a DuckDB database); the ledger is "
                "untouched: rebuild the read model with `mind replay --swap`"
            ) from None
        _attached[id(con)] = (con, alias, Path(path), read_only)
        if not read_only:  # DuckDB creates a file, and each WAL, with the umask's mode
            tighten(path)
            tighten(f"{path}.wal")
        con.execute(f"USE {alias}")
        return _settings(con)
    except BaseException:
        close(con)
        raise


def scratch(path: Path) -> duckdb.DuckDBPyConnection:
    """A connection to a scratch read model (`mind verify --export`'s trial, deleted after
    it), in an instance of its own on one thread: on the shared instance, DuckDB's worker
    threads spent ~0.4 s of CPU per 100k events applied next to the ~1.3 s the applying
    thread spent, and the applying thread's time stayed the same without them (threads is an
    instance's setting, so the shared instance keeps its pool). Close it with `close`."""
    con = duckdb.connect(str(path), config={"threads": "1", "checkpoint_threshold": "1GB"})
    try:
        con.execute("PRAGMA disable_checkpoint_on_shutdown")  # the file is deleted after it
        tighten(path)  # DuckDB creates a WAL with the umask's mode
        return _settings(con)
    except BaseException:
        con.close()
        raise


# DuckDB's `fsync_mode` is its instance's (every file this process attached): a small batch
# commits with it off for that commit alone (`commit`), and every checkpoint and every other
# commit of ours takes this lock too, so none of theirs runs unsynced meanwhile.
_durability = threading.RLock()


def commit(con: duckdb.DuckDBPyConnection, *, synced: bool = True, then: str = "") -> None:
    """COMMIT the open transaction. `synced` False: without waiting for the disk to have the
    WAL (a read model is derived, and its tracking row commits with its rows: a commit an
    operating-system crash loses is applied again from the ledger, exactly once). Only for a
    small transaction: a large one may checkpoint as it commits, and a checkpoint is always
    synced (the file's header must never reach the disk before its blocks); or for any on a
    `scratch` file, which is deleted after use. `then`: a statement sent after the COMMIT in
    the same call, one that changes only this connection's settings (a call less)."""
    with _durability:
        after = f"; {then}" if then else ""
        if synced:
            con.execute(f"COMMIT{after}")
            return
        # The mode restored in the same call (a call less per turn); a failed commit stops the
        # call before it, so it is restored here too.
        try:
            con.execute(f"SET fsync_mode = 'NONE'; COMMIT; SET fsync_mode = 'STANDARD'{after}")
        except BaseException:
            con.execute("SET fsync_mode = 'STANDARD'")
            raise


def checkpoint(con: duckdb.DuckDBPyConnection) -> None:
    """CHECKPOINT, never while a `commit` runs unsynced."""
    with _durability:
        con.execute("CHECKPOINT")


def close(con: duckdb.DuckDBPyConnection, *, keep: bool = True) -> None:
    """Close a connection from `connect`, detaching (checkpointing and unlocking) its file.
    `keep` False: the file is deleted next (a scratch read model), so its WAL is left as it is
    instead of being checkpointed into it (a 100k-event check's close: ~0.3 s of CPU)."""
    attached = _attached.get(id(con))
    if attached is not None and attached[0] is con:
        del _attached[id(con)]
    else:
        attached = None
    try:
        if attached is not None:
            _, alias, path, read_only = attached
            # Whatever a failure left open is rolled back, as closing would; usually none is.
            with contextlib.suppress(duckdb.TransactionException):
                con.execute("ROLLBACK")
            if keep and not read_only and wal_bytes(path) > WAL_CHECKPOINT_BYTES:
                checkpoint(con)
            con.execute("USE memory")
            con.execute(f"DETACH {alias}")
            if not read_only:
                tighten(f"{path}.wal")
    finally:
        con.close()


def shared(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `con` is a connection of this process's shared instance (`connect` to a file)."""
    attached = _attached.get(id(con))
    return attached is not None and attached[0] is con


def sibling(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A second connection reading the same database as `con`, for a reader in another thread
    (`projections.retrieval.concurrent_reads`); it attaches nothing, so its own `close()`
    closes it."""
    other = con.cursor()
    try:
        attached = _attached.get(id(con))
        if attached is not None:
            use = f"USE {attached[1]}; "
        else:
            ((catalog,),) = con.execute("SELECT current_database()").fetchall()
            use = f'USE "{catalog}"; '
        return _settings(other, use)
    except BaseException:
        other.close()
        raise


def sandboxed(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-only instance of its own for user SQL, with no access to any other file.

    DuckDB's external-access switch is global to an instance and cannot be turned back on, so
    it never goes on the shared one."""
    con = duckdb.connect(str(path), read_only=True, config={"enable_external_access": False})
    return _settings(con)


def wal_bytes(path: Path) -> int:
    """The size of a database file's write-ahead log (0 when there is none)."""
    try:
        return os.path.getsize(f"{path}.wal")
    except FileNotFoundError:
        return 0
