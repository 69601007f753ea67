"""Readers: open the published read model, first making sure it includes the ledger head."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from domain.errors import MindError
from projections.ports import LedgerReader
from projections.projector import Projector

WAIT_FOR_FOLLOWER_S = 15.0


class ProjectorBehindError(MindError):
    """Raised when a running follower does not reach the ledger head in time."""


@dataclass(frozen=True)
class ReadModelPaths:
    """The projector's working file, the published copy readers open, and the lock."""

    working: Path
    published: Path
    lock: Path


def published_position(published: Path) -> int:
    """The ledger position the published copy includes (0 when there is none)."""
    if not published.exists():
        return 0
    con = duckdb.connect(str(published), read_only=True)
    try:
        row = con.execute("SELECT max(position) FROM tracking").fetchone()
        return int(row[0]) if row and row[0] is not None else 0
    finally:
        con.close()


@contextmanager
def projector_lock(path: Path, *, wait: bool) -> Iterator[bool]:
    """Hold the projector lock (released by the OS if the holder dies); yields False if busy."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


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
        if time.monotonic() > deadline:
            raise ProjectorBehindError(
                f"the running projector has not reached ledger position {head} within "
                f"{timeout:.0f}s; check it with `mind status`"
            )
        time.sleep(0.02)
    return head


@contextmanager
def open_read_model(
    paths: ReadModelPaths, reader: LedgerReader, timeout: float = WAIT_FOR_FOLLOWER_S
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a read model that includes the ledger head as of now (read-your-writes).

    With no follower running, this process takes the projector lock, catches the working file
    up and reads it directly (no copy needed). With a follower holding the lock, it waits for a
    published copy that includes the head and reads that, read-only.
    """
    head = reader.head()[0]
    deadline = time.monotonic() + timeout
    while True:
        with projector_lock(paths.lock, wait=False) as held:
            if held:
                projector = Projector(paths.working)
                try:
                    projector.catch_up(reader)
                    yield projector.con
                finally:
                    projector.close()
                return
        if published_position(paths.published) >= head and paths.published.exists():
            con = duckdb.connect(str(paths.published), read_only=True)
            try:
                yield con
            finally:
                con.close()
            return
        if time.monotonic() > deadline:
            raise ProjectorBehindError(
                f"the running projector has not reached ledger position {head} within "
                f"{timeout:.0f}s; check it with `mind status`"
            )
        time.sleep(0.02)


def read_position(paths: ReadModelPaths) -> int:
    """The position readers would see now without catching up."""
    with projector_lock(paths.lock, wait=False) as held:
        if held and paths.working.exists():
            con = duckdb.connect(str(paths.working), read_only=True)
            try:
                row = con.execute("SELECT max(position) FROM tracking").fetchone()
                return int(row[0]) if row and row[0] is not None else 0
            finally:
                con.close()
    return published_position(paths.published)
