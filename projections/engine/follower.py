"""The projector as a long-running process: follow the ledger, publish after each change."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType
from typing import Protocol

from mindledger.domain.errors import ConflictError
from mindledger.domain.private_files import tighten
from mindledger.projections.engine.ports import LedgerReader
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.readmodel import ReadModelPaths, projector_lock


class FollowableReader(LedgerReader, Protocol):
    """A reader that can wait for the ledger to change (polling or LISTEN/NOTIFY)."""

    def wait(self, timeout: float) -> None:
        """Return when something may have been appended, or after `timeout` seconds."""
        ...


class ProjectorRunningError(ConflictError):
    """Raised when another projector process already holds this read model."""


def follow(
    paths: ReadModelPaths,
    reader: FollowableReader,
    on_batch: Callable[[int, int], None],
    poll_s: float = 0.1,
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Apply new events until SIGINT/SIGTERM (or `should_stop`); returns how many were applied."""
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    total = 0
    try:
        with projector_lock(paths.lock, wait=False) as held:
            if not held:
                raise ProjectorRunningError(
                    "another projector is already following this mind; stop it first"
                )
            projector = Projector(paths.working)
            wal = f"{paths.working}.wal"
            try:
                projector.publish(paths.published)
                tighten(wal)
                while not stopping and not (should_stop and should_stop()):
                    applied = projector.catch_up(reader, maintain=True)
                    if applied:
                        projector.publish(paths.published)
                        # DuckDB makes a new WAL with the umask's mode, and this process may
                        # run for days: private after each batch, not only when it stops.
                        tighten(wal)
                        total += applied
                        on_batch(applied, projector.position())
                    else:
                        reader.wait(poll_s)
            finally:
                projector.close()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return total


def sleep_poll(timeout: float) -> None:
    """The SQLite way of waiting: it has no notifications, so poll."""
    time.sleep(timeout)
