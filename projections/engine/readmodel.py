"""Readers: open the published read model, first making sure it includes the ledger head."""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.errors import MindError
from mindledger.domain.private_files import FILE_MODE
from mindledger.projections.engine.duckdb_files import close, connect, sandboxed
from mindledger.projections.engine.ports import LedgerReader
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.read_only_home import current_copy, writable

WAIT_FOR_FOLLOWER_S = 15.0


class ProjectorBehindError(MindError):
    """Raised when a running follower does not reach the ledger head in time."""


class ReadModelPaths(NamedTuple):
    """The projector's working file, the published copy readers open, and the lock."""

    working: Path
    published: Path
    lock: Path


def published_position(published: Path) -> int:
    """The ledger position the published copy includes (0 when there is none)."""
    if not published.exists():
        return 0
    con = connect(published, read_only=True)
    try:
        return _tracked(con)
    finally:
        close(con)


def _tracked(con: duckdb.DuckDBPyConnection) -> int:
    """The ledger position a read model includes."""
    row = con.execute("SELECT max(position) FROM tracking").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


# The lock files this process holds now (how many times each): a read that waited for one of
# them would wait for itself (the floor's append check asks).
_held: dict[str, int] = {}


def held_here(path: Path) -> bool:
    """Whether this process holds the projector lock at `path` now for a read under way (a
    session kept open between turns gives the lock up to a read that asks for it)."""
    key = os.path.abspath(path)
    return _held.get(key, 0) > 0 and key not in _lingering


# Sessions kept open between a served mind's turns (`ReadSession.linger`), by lock path, with
# their owner and their expiry: opening and closing the read model was a third of a turn's cost.
_lingering: dict[str, tuple[ReadSession, object, _Expiry]] = {}
_linger_guard = threading.Lock()
LINGER_S = 2.0  # how long another process may wait for the lock between turns


class _Expiry:
    """When a kept session is closed if nobody took it up: one thread of the process waits for
    every expiry (`_expiries`); a `threading.Timer` per kept session started a thread per turn."""

    def __init__(self, key: str, session: ReadSession, at: float) -> None:
        self.key, self.session, self.at = key, session, at
        self.cancelled = False  # taken up or released: never expires

    def cancel(self) -> None:
        self.cancelled = True  # the waiting thread drops it when it next wakes


_expiries: list[_Expiry] = []
_expiry_wake = threading.Condition(threading.Lock())
_expiry_thread: tuple[int, threading.Thread] | None = None  # (pid, thread): a fork starts its own


def _schedule(expiry: _Expiry) -> None:
    global _expiry_thread
    with _expiry_wake:
        _expiries.append(expiry)
        if _expiry_thread is None or _expiry_thread[0] != os.getpid():
            thread = threading.Thread(target=_expire_due, name="mind-read-expiry", daemon=True)
            _expiry_thread = (os.getpid(), thread)
            thread.start()
        elif len(_expiries) == 1 or expiry.at < min(e.at for e in _expiries[:-1]):
            _expiry_wake.notify()


def _expire_due() -> None:
    while True:
        with _expiry_wake:
            now = time.monotonic()
            due = [e for e in _expiries if not e.cancelled and e.at <= now]
            _expiries[:] = [e for e in _expiries if not e.cancelled and e.at > now]
            if not due:
                wait = min((e.at for e in _expiries), default=now + 3600.0) - now
                _expiry_wake.wait(max(wait, 0.001))
                continue
        for expiry in due:
            _expire(expiry)


def release_lingering(path: Path, owner: object | None = None) -> None:
    """Close the session kept open on the lock at `path` (only `owner`'s, when given)."""
    key = os.path.abspath(path)
    with _linger_guard:
        kept = _lingering.get(key)
        if kept is None or (owner is not None and kept[1] is not owner):
            return
        del _lingering[key]
    kept[2].cancel()
    with kept[0].busy:  # a catch-up under way in it (`use_lingering`) finishes first
        kept[0].close()


def take_lingering(paths: ReadModelPaths, owner: object) -> ReadSession | None:
    """The session `owner` kept open on these paths, now its caller's alone (None: none, or
    another owner's, which is closed so that the caller can take the lock)."""
    key = os.path.abspath(paths.lock)
    with _linger_guard:
        kept = _lingering.pop(key, None)
    if kept is None:
        return None
    kept[2].cancel()
    with kept[0].busy:  # a catch-up under way in it (`use_lingering`) finishes first
        if kept[1] is owner and kept[0].paths == paths:
            return kept[0]
        kept[0].close()
    return None


def use_lingering(path: Path, owner: object | None, work: Callable[[ReadSession], None]) -> bool:
    """Run `work` on the session `owner` (None: anyone) keeps open on the lock at `path`, if
    one still is; whether it ran. A turn taking the session up, a reader wanting the lock or
    its expiry waits for `work`; one that came first leaves nothing to do. A failing `work`
    closes the session: the next read opens its own and meets the failure itself."""
    key = os.path.abspath(path)
    with _linger_guard:
        kept = _lingering.get(key)
    if kept is None or (owner is not None and kept[1] is not owner):
        return False
    session = kept[0]
    with session.busy:
        with _linger_guard:
            current = _lingering.get(key)
        if current is None or current[0] is not session:
            return False  # taken up, released or expired before this could start
        try:
            work(session)
        except Exception:
            with _linger_guard:
                if key in _lingering and _lingering[key][0] is session:
                    _lingering.pop(key)[2].cancel()
            session.close()
            return False
    return True


def _expire(expiry: _Expiry) -> None:
    # The session stays listed until it is closed: a release asked for meanwhile (a mind's
    # close as its process ends) finds it and waits for `busy`. Unlisted first, such a release
    # found nothing and the process went on to exit while this daemon thread was still inside
    # DuckDB (a 1M-event file's close takes seconds): the interpreter ended the thread there and
    # the process aborted after its output ("FATAL: exception not rethrown", exit 134).
    with expiry.session.busy:
        with _linger_guard:
            kept = _lingering.get(expiry.key)
            if kept is None or kept[2] is not expiry:  # taken up or released since
                return
        expiry.session.close()
        with _linger_guard:
            current = _lingering.get(expiry.key)
            if current is not None and current[2] is expiry:  # nobody released it meanwhile
                del _lingering[expiry.key]


@contextmanager
def projector_lock(path: Path, *, wait: bool) -> Iterator[bool]:
    """Hold the projector lock (released by the OS if the holder dies); yields False if busy.

    In a home this process cannot write, the lock file is locked through a read-only handle
    (flock needs none other); with no lock file there, no process can be projecting into it.
    A session this process kept open between turns gives the lock up first."""
    # Bound here: a session left open until the interpreter ends is finalized after the
    # modules' globals are gone, and its release then printed a TypeError traceback.
    held, flock, unlocked, close = _held, fcntl.flock, fcntl.LOCK_UN, os.close
    release_lingering(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError as e:
        if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            yield True
            return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        key = os.path.abspath(path)
        held[key] = held.get(key, 0) + 1
        try:
            yield True
        finally:
            held[key] -= 1
            flock(fd, unlocked)
    finally:
        close(fd)


# A reader that cannot take the projector lock and finds the published copy behind the head
# asks its holder for a publish by writing one byte into the lock file; a holder (a read
# session of another process: it catches up its working file and reads that, never publishing)
# checks at each read and when it lets go, clears the request and publishes. Without this, a
# process reading in a loop held the lock nearly all the time and a reader of another process
# waited for a copy nobody made, until its deadline (`ProjectorBehindError`). A file write, not
# another file: a home keeps no new file, and a home nobody can write keeps the plain wait.


def ask_for_publish(lock: Path) -> None:
    """Ask the holder of the projector lock at `lock` to publish what it has applied."""
    try:
        fd = os.open(lock, os.O_WRONLY)
    except OSError:
        return
    try:
        os.pwrite(fd, b"1", 0)  # at 0: asking again never grows the file
    except OSError:
        pass
    finally:
        os.close(fd)


def publish_if_asked(paths: ReadModelPaths, projector: Projector) -> None:
    """Publish the working file (the caller holds the lock) when a reader asked for it and the
    published copy lacks some of what it includes. A copy that cannot be made (a full disk) is
    left to the asker's own deadline: the holder's read goes on."""
    try:
        if paths.lock.stat().st_size == 0:
            return
        os.truncate(paths.lock, 0)  # first: a request made during the copy waits for the next
    except OSError:
        return
    try:
        published = paths.published
        if not published.exists() or published_position(published) < projector.position():
            projector.publish(published)
    except (OSError, duckdb.Error):
        pass


def catch_up_and_publish(paths: ReadModelPaths, reader: LedgerReader) -> int:
    """Run a projector in this process (the caller holds the lock); returns events applied."""
    projector = Projector(paths.working)
    try:
        applied = projector.catch_up(reader)
        if applied or published_position(paths.published) != projector.position():
            projector.publish(paths.published)
        return applied
    finally:
        projector.close()


def ensure_fresh(
    paths: ReadModelPaths, reader: LedgerReader, timeout: float = WAIT_FOR_FOLLOWER_S
) -> int:
    """Make the published copy include every event up to the head as of now; returns the head.

    With no follower running, catch up in this process; with one, wait for its next publish.
    """
    head = reader.head()[0]
    deadline = time.monotonic() + timeout
    while published_position(paths.published) < head or not paths.published.exists():
        with projector_lock(paths.lock, wait=False) as held:
            if held:
                catch_up_and_publish(paths, reader)
                continue
        ask_for_publish(paths.lock)
        if time.monotonic() > deadline:
            raise ProjectorBehindError(
                f"the running projector has not reached ledger position {head} within "
                f"{timeout:.0f}s; check it with `mind status`"
            )
        time.sleep(0.02)
    return head


class ReadSession:
    """A read model that includes the ledger head, kept open across several reads.

    With no follower running, it holds the projector lock and reads the working file (catching
    it up on `refresh`); with a follower holding the lock, it reads published copies read-only.
    """

    def __init__(
        self, paths: ReadModelPaths, reader: LedgerReader, timeout: float = WAIT_FOR_FOLLOWER_S
    ) -> None:
        self.paths, self.reader, self.timeout = paths, reader, timeout
        # Held while a kept session is caught up in the background (`use_lingering`).
        self.busy = threading.Lock()
        self.projector: Projector | None = None
        self.lock: Any = None
        self.con: duckdb.DuckDBPyConnection | None = None
        # In a home this process cannot write: the current read-model file it reads, read-only.
        self.copy: ExitStack | None = None

    def __enter__(self) -> ReadSession:
        try:
            self.refresh()
        except BaseException:
            self.close()  # a failed open (a damaged file) must not keep the projector lock
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the file and the lock (publishing first when another reader asked)."""
        try:
            if self.projector is not None:
                publish_if_asked(self.paths, self.projector)
        finally:
            self._release()

    def _release(self) -> None:
        if self.projector is not None:
            try:
                if self.projector.moved:  # the next `status`/`commitments` read it, not DuckDB
                    self.projector.summarise()
            finally:
                self.projector.close()
                self.projector = None
        elif self.con is not None:
            close(self.con)
        self.con = None
        if self.copy is not None:
            self.copy.close()
            self.copy = None
        if self.lock is not None:
            self.lock.__exit__(None, None, None)
            self.lock = None

    def linger(self, owner: object) -> None:
        """Keep this session open for `owner`'s next read (`take_lingering`), for up to
        `LINGER_S`, unless a reader of this process wants the lock first; a session that
        holds no projector (a follower's published copy, a read-only home) is closed."""
        if self.projector is None:
            self.close()
            return
        publish_if_asked(self.paths, self.projector)  # a reader waiting now waits no longer
        key = os.path.abspath(self.paths.lock)
        expiry = _Expiry(key, self, time.monotonic() + LINGER_S)
        with _linger_guard:
            previous = _lingering.pop(key, None)
            _lingering[key] = (self, owner, expiry)
        if previous is not None:  # not expected (one owner reads at a time): never leak one
            previous[2].cancel()
            previous[0].close()
        _schedule(expiry)

    def _hold(self) -> bool:
        """Take the projector lock and open the working file, unless another process holds it."""
        lock = projector_lock(self.paths.lock, wait=False)
        if not lock.__enter__():
            lock.__exit__(None, None, None)
            return False
        try:
            self.projector = Projector(self.paths.working)
            self.con = self.projector.con
        except (OSError, duckdb.Error):
            if writable(self.paths.working.parent, self.paths.working):
                lock.__exit__(None, None, None)
                raise
            self._read_only(lock)
        except BaseException:  # e.g. a damaged file: the lock must not outlive the attempt
            lock.__exit__(None, None, None)
            raise
        self.lock = lock
        return True

    def _read_only(self, lock: Any) -> None:
        """Read a current read-model file read-only (the home cannot be written): the
        projector's own file when it includes the head, else a caught-up temporary copy."""
        self.copy = ExitStack()
        try:
            path = self.copy.enter_context(
                current_copy(
                    self.paths.working, self.paths.published, self.reader, self.reader.head()[0]
                )
            )
            self.con = connect(path, read_only=True)
        except BaseException:
            self.copy.close()
            self.copy = None
            lock.__exit__(None, None, None)
            raise

    def open(self) -> duckdb.DuckDBPyConnection:
        """A connection to the read model as it stands, not caught up: the working file under
        the lock, or (with a follower holding it) the published copy. See `position`."""
        if self.con is not None:
            return self.con
        if self._hold():
            assert self.con is not None
            return self.con  # the working file, or in a read-only home a current copy
        if self.paths.published.exists():
            self.con = connect(self.paths.published, read_only=True)
            return self.con
        return self.refresh()  # nothing published yet: wait for the follower's first copy

    def position(self) -> int:
        """The last ledger position the open connection includes."""
        if self.projector is not None:
            return self.projector.position()
        assert self.con is not None, "open the session first"
        return _tracked(self.con)

    def refresh(self) -> duckdb.DuckDBPyConnection:
        """Make the connection include every event up to the ledger head as of now."""
        head = self.reader.head()[0]
        if self.projector is not None:
            self.projector.catch_up(self.reader)
            publish_if_asked(self.paths, self.projector)
            return self.projector.con
        if self.copy is not None and self.con is not None and self.position() >= head:
            return self.con  # read-only home: the file read still includes the head
        deadline = time.monotonic() + self.timeout
        while True:
            # The connection's own position, not the published file's: a follower publishes by
            # replacing the file, and a connection keeps reading the copy it opened.
            if self.con is not None and self.position() >= head:
                return self.con
            self.close()
            if self._hold():
                if self.projector is None:  # read-only home: a file that includes the head
                    assert self.con is not None
                    return self.con
                self.projector.catch_up(self.reader)
                return self.projector.con
            if self.paths.published.exists() and published_position(self.paths.published) >= head:
                self.con = connect(self.paths.published, read_only=True)
                return self.con
            ask_for_publish(self.paths.lock)
            if time.monotonic() > deadline:
                raise ProjectorBehindError(
                    f"the running projector has not reached ledger position {head} within "
                    f"{self.timeout:.0f}s; check it with `mind status`"
                )
            time.sleep(0.02)


@contextmanager
def open_sandboxed(
    paths: ReadModelPaths, reader: LedgerReader, timeout: float = WAIT_FOR_FOLLOWER_S
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The published read model as of now, read-only, with no access to other files: for SQL a
    user wrote (`mind query`). In a home this process cannot write, a current read-model file
    (or a caught-up temporary copy) stands in for the published one."""
    with ExitStack() as stack:
        source = paths.published
        try:
            ensure_fresh(paths, reader, timeout)
        except (OSError, duckdb.Error):
            if writable(paths.working.parent, paths.working):
                raise
            head = reader.head()[0]
            source = stack.enter_context(current_copy(paths.working, paths.published, reader, head))
        con = sandboxed(source)
        try:
            yield con
        finally:
            con.close()


@contextmanager
def open_read_model(
    paths: ReadModelPaths, reader: LedgerReader, timeout: float = WAIT_FOR_FOLLOWER_S
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a read model that includes the ledger head as of now (read-your-writes)."""
    with ReadSession(paths, reader, timeout) as session:
        assert session.con is not None
        yield session.con


def read_position(paths: ReadModelPaths) -> int:
    """The position readers would see now without catching up."""
    with projector_lock(paths.lock, wait=False) as held:
        if held and paths.working.exists():
            con = connect(paths.working, read_only=True)
            try:
                return _tracked(con)
            finally:
                close(con)
    return published_position(paths.published)
