"""The integrity check of a large export file on two cores: its second half checked by a
forked process while this one checks the first (`mind verify --export`).

A line's check needs only the line and the hash of the line before, which the line itself
claims in its `prev`: the second half is checked from the position and `prev` its first line
claims, and the halves are joined where the first half's last line is that position's
predecessor and its hash that `prev`. Any fault, in either half or at the join, sends the
whole file to the check of one process (`check_chain`), so a broken file is reported exactly
as it always was: only a sound file is ever answered in halves.

It splits only a regular file worth it (`SPLIT_BYTES`), on a machine with a second core for
it, in a process with no other thread (a fork copies only the calling thread: another's
locks could stay held in the copy). The child reads its half with `os.pread`, never moving
the shared file offset, and leaves by `os._exit`, whatever happens (it never returns into
the caller's code); the parent kills and reaps it if the parent stops first (Ctrl-C).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import stat
import threading
from collections.abc import Callable
from typing import IO, Protocol

from mindledger.adapters.export_chain import (
    ChainBroken,
    ChainChecked,
    check_chain,
    check_count,
    check_lines,
)

SPLIT_BYTES = 16 * 1024 * 1024  # below this a fork is not worth it (~28,000 usual lines)
_READ_BUFFER = 1024 * 1024
_SEARCH_CHUNK = 64 * 1024  # read at a time looking for where the second half starts
# Where the second half starts: after a line that ends as an event line does, at a line that
# starts as one does (a raw newline never occurs inside a line: JSON escapes it).
_JOIN = b'}\n{"aggregate":"'
# What the second half's first line claims: its position and the hash before it.
_CLAIMED = re.compile(
    rb',"position":([1-9][0-9]{0,17}),"prev":"([0-9a-f]{64})","hash":"[0-9a-f]{64}"}\n\Z'
)


class _Part(io.RawIOBase):
    """Bytes `start` up to `end` of file descriptor `fd`, read with `os.pread` (the offset of
    the file, shared with a forked process, is never moved)."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        super().__init__()
        self.fd, self.at, self.end = fd, start, end

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = os.pread(self.fd, min(len(buffer), self.end - self.at), self.at)
        buffer[: len(data)] = data
        self.at += len(data)
        return len(data)


def _part(fd: int, start: int, end: int) -> IO[bytes]:
    return io.BufferedReader(_Part(fd, start, end), buffer_size=_READ_BUFFER)


class Apart(Protocol):
    """A check running apart from this process's: its answer (None: it failed, whatever the
    fault), and a way to stop it."""

    def result(self) -> ChainChecked | None: ...

    def stop(self) -> None: ...


def check_split(
    handle: IO[bytes],
    genesis: str,
    expected: int,
    anchor: str | None,
    max_line: int,
    progress: Callable[[int], None] = lambda done: None,
    split_bytes: int | None = None,
    apart: Callable[[Callable[[], ChainChecked]], Apart] | None = None,
) -> ChainChecked:
    """`check_chain`'s answer for the event lines left in `handle`, the second half checked
    `apart` (a forked process) when the file is worth it (see the module's note); raises
    ChainBroken at the first bad line."""
    start_at = _regular_from(handle, SPLIT_BYTES if split_bytes is None else split_bytes)
    if start_at is None or (apart is None and not _can_fork()):
        return check_chain(handle, genesis, expected, anchor, max_line, progress)
    fd, size = handle.fileno(), os.fstat(handle.fileno()).st_size
    halves = _halves(fd, start_at, size, max_line)
    if halves is None:
        return check_chain(handle, genesis, expected, anchor, max_line, progress)
    join, first, claimed_prev = halves
    whole, first_half = max(1, size - start_at), max(1, join - start_at)

    most = 0  # the highest count told: the check of one process after a fault tells none lower

    def told(done: int) -> None:  # the first half's count, as a share of the whole file
        nonlocal most
        most = max(most, min(expected, done * whole // first_half))
        progress(most)

    def further(done: int) -> None:  # a count only once past what the halves told
        if done > most:
            progress(done)

    second = (apart or _forked)(
        lambda: check_lines(_part(fd, join, size), claimed_prev, first, expected, anchor, max_line)
    )
    try:
        before = check_lines(
            _part(fd, start_at, join), genesis, 1, expected, anchor, max_line, told
        )
        after = second.result()
    finally:
        second.stop()
    if after is None or before.events + 1 != first or before.head != claimed_prev:
        # A fault in the second half, or halves that do not join: the check of one process
        # finds and words it (the first half, up to the join, was sound).
        handle.seek(start_at)
        return check_chain(handle, genesis, expected, anchor, max_line, further)
    progress(after.events)
    check_count(after.events, expected)
    # The last line with the anchor's hash, as the check of one process finds it.
    found = after.anchor_position if after.anchor_position is not None else before.anchor_position
    return ChainChecked(after.events, after.head, found)


def _regular_from(handle: IO[bytes], split_bytes: int) -> int | None:
    """Where the event lines start in `handle` when it is a regular file with at least
    `split_bytes` of them, else None."""
    try:
        found = os.fstat(handle.fileno())
        at = handle.tell()
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None
    return at if stat.S_ISREG(found.st_mode) and found.st_size - at >= split_bytes else None


def _can_fork() -> bool:
    """A fork is safe here (no other thread) and worth it (a second core to run on)."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:  # its children reaped unasked:
        return False  # no status to read, and a pid freed for reuse before it is killed
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) > 1
    return (os.cpu_count() or 1) > 1


def _halves(fd: int, start: int, size: int, max_line: int) -> tuple[int, int, str] | None:
    """Where the second half starts (the first event line after the middle), the position
    its first line claims and the hash it claims before it; None when there is no such line
    (one that is not as the exporter writes it: the check of one process reads it)."""
    middle = start + (size - start) // 2
    near = _read_until(fd, middle, _JOIN, max_line + len(_JOIN))
    found = near.find(_JOIN)
    if found == -1:
        return None
    join = middle + found + 2
    line = _read_until(fd, join, b"\n", max_line + 1)
    end = line.find(b"\n")
    claimed = _CLAIMED.search(line, 0, end + 1) if end != -1 else None
    if claimed is None:
        return None
    return join, int(claimed.group(1)), claimed.group(2).decode()


def _read_until(fd: int, at: int, wanted: bytes, limit: int) -> bytes:
    """The bytes from `at` up to and including `wanted`, at most `limit` of them (fewer at
    the file's end; `wanted` is then not in them)."""
    read = bytearray()  # grown in place: a 16 MiB line read as bytes was copied 256 times
    while len(read) < limit:
        chunk = os.pread(fd, min(_SEARCH_CHUNK, limit - len(read)), at + len(read))
        if not chunk:
            break
        looked_from = max(0, len(read) - len(wanted) + 1)
        read += chunk
        if read.find(wanted, looked_from) != -1:
            break
    return bytes(read)


class _Forked:
    """A check running in a forked process: `result()` its answer (None: it failed, for
    whatever reason), `stop()` kills it if it still runs and reaps it."""

    def __init__(self, pid: int, reading: int) -> None:
        self.pid, self.reading, self.reaped = pid, reading, False

    def result(self) -> ChainChecked | None:
        chunks = []
        while chunk := os.read(self.reading, 65536):
            chunks.append(chunk)
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # reaped by another (a SIGCHLD handler): its status unknown
            self.reaped = True
            return None
        self.reaped = True
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or not chunks:
            return None
        events, head, found = json.loads(b"".join(chunks))
        return ChainChecked(events, head, found)

    def stop(self) -> None:
        os.close(self.reading)
        if self.reaped:
            return
        self.reaped = True
        # Killed only while still this process's child (not reaped: its pid not reused); one
        # reaped by another (a SIGCHLD handler) is gone.
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)


def _forked(check: Callable[[], ChainChecked]) -> Apart:
    """`check()` run in a forked process; its answer comes back through a pipe."""
    reading, writing = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: whatever happens, it leaves here, by `os._exit`
        status = 1
        try:
            os.close(reading)
            _leave_with(parent)
            answer = json.dumps(list(check())).encode()
            with os.fdopen(writing, "wb") as out:
                out.write(answer)
            status = 0
        except BaseException:  # a fault of its half (status 1): the parent checks anew
            pass
        finally:
            os._exit(status)
    os.close(writing)
    return _Forked(pid, reading)


PARENT_LOOKED_AT_S = 0.5  # how often a forked half looks whether its parent still runs


def _leave_with(parent: int) -> None:
    """In a forked half: its parent looked at now and then; one that was killed (SIGTERM,
    SIGKILL: no Ctrl-C, no `stop`) leaves no orphan checking on, nor holding the command's
    output open for long (a caller reading it to its end waited for the half). Its standard
    streams are left as they are: in a process started with one closed, the file checked
    may be on that descriptor. (A fork's child has no timers of its own: this one is free.)"""

    def looked(signum: int, frame: object) -> None:
        if os.getppid() != parent:
            os._exit(1)

    signal.signal(signal.SIGALRM, looked)
    signal.setitimer(signal.ITIMER_REAL, PARENT_LOOKED_AT_S, PARENT_LOOKED_AT_S)


__all__ = ["Apart", "ChainBroken", "check_split"]
