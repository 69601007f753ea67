"""The head anchor: the last ledger head a writer in this home saw, kept outside the ledger.

A ledger whose last events were deleted (with their chain rows) is still a valid chain, so the
chain alone cannot show it. Every process that appends through our recorders records the new head
in a small JSON file in the home (`ledger-head.json`); `mind verify` reports a ledger that ends
before it. The file only moves forward for one ledger: concurrent writers may leave it a little
behind the true head (harmless: a ledger ahead of its anchor is fine), never ahead of it, and
never behind a head another writer recorded (each reads and rewrites it under a `flock`).
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from mindledger.domain.errors import MindError

POSITION_MAX = 2**63 - 1  # the last position a ledger can hold (a signed 64-bit row id)


class Anchor(NamedTuple):
    """A head someone kept: the hash at a position (position None when only the hash is known)."""

    source: str
    hash: str
    position: int | None = None
    ledger_id: str | None = None


class AnchorUnreadableError(MindError):
    """Raised when an anchor file exists but cannot be read or parsed (reported, not fatal)."""


class LedgerBehindAnchorError(MindError):
    """Raised when an append finds the ledger ending before, or differing from, its anchor."""


class HeadAnchorFile:
    """`ledger-head.json`: {"ledger_id", "position", "hash"}, rewritten in place under a lock.

    Writers take an exclusive `flock` on the file, read it, and overwrite it from offset 0 with
    one `pwrite` (padded with spaces to the old length, which JSON reads as whitespace, so it
    never needs a truncate); readers take a shared one. Rewriting in place costs a few
    microseconds where a new file renamed over the old one cost ~2 ms of the filesystem's
    rename handling on every append (docs/decisions/0004-head-anchor-file.md).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._parsed: tuple[bytes, Anchor] | None = None  # the last record read or written

    def read(self) -> Anchor | None:
        """The recorded head, or None when no file (or an empty one) exists yet."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise AnchorUnreadableError(f"{self.path} cannot be read ({_one_line(e)})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # no half-written record from a writer mid-pwrite
            raw = _read_all(fd)
            # Empty: a writer stopped between creating the file and its first record, which
            # is no more than no file at all (deleting it says as much).
            return self._parse(raw) if raw.strip() else None
        except OSError as e:
            raise AnchorUnreadableError(f"{self.path} cannot be read ({_one_line(e)})") from None
        finally:
            os.close(fd)  # closing releases the lock

    def _parse(self, raw: bytes) -> Anchor:
        # An append reads the record twice (its check, then its rewrite), mostly the one this
        # process wrote last: parsed once.
        parsed = self._parsed
        if parsed is not None and parsed[0] == raw:
            return parsed[1]
        anchor = self._decode(raw)
        self._parsed = (raw, anchor)
        return anchor

    def _decode(self, raw: bytes) -> Anchor:
        try:
            data = json.loads(raw)
        except ValueError as e:
            raise AnchorUnreadableError(f"{self.path} cannot be read ({_one_line(e)})") from None
        except RecursionError:  # it was "unexpected failure" on every read and write
            raise AnchorUnreadableError(f"{self.path} cannot be read (nested too deeply)") from None
        position = data.get("position") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            # A ledger position (SQLite's INTEGER): one past it failed every read of the ledger
            # at it ("unexpected failure: Python int too large to convert to SQLite INTEGER").
            or not isinstance(position, int)
            or isinstance(position, bool)
            or not 1 <= position <= POSITION_MAX
            or not isinstance(data.get("hash"), str)
            or not isinstance(data.get("ledger_id"), str)
        ):
            raise AnchorUnreadableError(f"{self.path} does not hold a ledger head")
        return Anchor(str(self.path), data["hash"], data["position"], data["ledger_id"])

    def advance(self, ledger_id: str, position: int, hash_: str) -> None:
        """Record a head just committed, unless the file already holds a later one of this ledger.

        Read and rewritten under the exclusive lock, so racing writers cannot move it back. A
        process killed mid-append leaves the old or the new record: one `pwrite` of under a
        sector is not split. No fsync: after a power cut the worst case is an older or
        unreadable anchor, which verify reports but never takes for a truncation. A home where
        the file cannot be written (read-only, full) keeps the ledger write: the anchor is a
        check, not part of the record.
        """
        held = self.hold()
        if held is not None:
            try:
                held.advance(ledger_id, position, hash_)
            finally:
                held.release()

    def hold(self) -> HeldAnchor | None:
        """The file opened (made if missing) and locked exclusively until `release`; None
        when it cannot be opened for writing (a read-only home)."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = _read_all(fd)
        except OSError:
            os.close(fd)
            return None
        return HeldAnchor(self, fd, raw)


class HeldAnchor:
    """The anchor file under this process's exclusive lock: read once, rewritten at most once."""

    def __init__(self, file: HeadAnchorFile, fd: int, raw: bytes) -> None:
        self.file, self.fd, self.raw = file, fd, raw

    def read(self) -> Anchor | None:
        """The head it holds (None when empty); AnchorUnreadableError when it holds none."""
        return self.file._parse(self.raw) if self.raw.strip() else None

    def advance(self, ledger_id: str, position: int, hash_: str) -> None:
        """Rewrite it with this head unless it holds a later one of this ledger (no error: the
        anchor is a check, not part of the record)."""
        try:
            current = self.read()
        except AnchorUnreadableError:
            current = None
        if current and current.ledger_id == ledger_id and (current.position or 0) >= position:
            return
        payload = json.dumps({"ledger_id": ledger_id, "position": position, "hash": hash_})
        data = payload.encode().ljust(len(self.raw))
        try:
            os.pwrite(self.fd, data, 0)
        except OSError:
            return
        self.raw = data
        self.file._parsed = (data, Anchor(str(self.file.path), hash_, position, ledger_id))

    def release(self) -> None:
        """Close the file, which lets go of the lock."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _read_all(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 65536, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())


HEAD_ANCHOR_ENV = "LEDGER_HEAD_ANCHOR"  # the persistence setting naming the anchor file


class AnchoredRecorder:
    """Mixed into our recorders: notes the head inside the append's transaction, records it in
    the anchor file once the transaction committed (never for a rolled-back append)."""

    head_anchor: HeadAnchorFile | None = None
    _ledger_id: str | None = None

    def _check_anchor(
        self, ledger_id: str, head: int, hash_at: Callable[[int], str | None]
    ) -> None:
        """Refuse an append (inside its transaction, so nothing is written) to a ledger that ends
        before its anchor or holds another hash at the anchored position: appending would hide
        the loss, and the anchor is never moved backwards. One small file read per append.
        An anchor of another ledger (a home re-created) is replaced, as before; verify reports it.
        """
        if self.head_anchor is None:
            return
        self._forget_head()  # an earlier attempt of this thread's append lets go first
        # Held from here through the commit, so the head recorded after it is read and written
        # under one lock: one open per append. Order: SQLite's write lock, then this one (a
        # writer never waits for the ledger while holding the anchor: no deadlock).
        held = self.head_anchor.hold()
        try:
            self._check_held(ledger_id, head, hash_at, held)
        except BaseException:
            if held is not None:
                held.release()
            raise
        self._pending_heads().held = held

    def _check_held(
        self,
        ledger_id: str,
        head: int,
        hash_at: Callable[[int], str | None],
        held: HeldAnchor | None,
    ) -> None:
        assert self.head_anchor is not None
        verify = "run `mind verify`"
        try:
            anchor = held.read() if held is not None else self.head_anchor.read()
        except AnchorUnreadableError as e:
            raise LedgerBehindAnchorError(
                f"nothing was written: {e}; {verify}, and if the ledger verifies, delete "
                f"{self.head_anchor.path.name} so the next write starts a new anchor"
            ) from None
        if anchor is None or anchor.ledger_id != ledger_id or anchor.position is None:
            return
        if anchor.position > head:
            raise LedgerBehindAnchorError(
                f"nothing was written: the ledger ends at position {head}, before the "
                f"{anchor.position} its anchor {self.head_anchor.path.name} recorded (events "
                f"were deleted); {verify}"
            )
        if anchor.position > 0 and hash_at(anchor.position) != anchor.hash:
            raise LedgerBehindAnchorError(
                f"nothing was written: the ledger's hash at position {anchor.position} is not "
                f"the one its anchor {self.head_anchor.path.name} recorded; {verify}"
            )

    def _note_head(self, ledger_id: str, entries: list[tuple[int, int, str, str]]) -> None:
        if self.head_anchor is not None and entries:
            self._ledger_id = ledger_id
            self._pending_heads().last = (entries[-1][0], entries[-1][3])

    def _record_head(self) -> None:
        local = self._pending_heads()
        head, local.last = getattr(local, "last", None), None
        held, local.held = getattr(local, "held", None), None
        try:
            if head is not None and self.head_anchor is not None and self._ledger_id is not None:
                if held is not None:
                    held.advance(self._ledger_id, head[0], head[1])
                else:
                    self.head_anchor.advance(self._ledger_id, head[0], head[1])
        finally:
            if held is not None:
                held.release()

    def _forget_head(self) -> None:
        local = self._pending_heads()
        held, local.held, local.last = getattr(local, "held", None), None, None
        if held is not None:
            held.release()

    def _pending_heads(self) -> threading.local:
        # Per thread: a turn appends from a worker thread while the main thread may append too.
        pending: threading.local | None = self.__dict__.get("_heads")
        if pending is None:
            pending = self.__dict__.setdefault("_heads", threading.local())
        assert pending is not None
        return pending
