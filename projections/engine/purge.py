"""After a forget: the read model built anew from position 0, so no row, index term, payload or
freed page of the old files keeps a forgotten word (events whose keys are gone project as
"[forgotten]" and are not indexed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mindledger.domain.errors import ConflictError
from mindledger.projections.engine.ports import LedgerReader
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.readmodel import ReadModelPaths, projector_lock

LOCK_WAIT_S = 15.0


class ReadModelHeldError(ConflictError):
    """Raised when another projector holds the read model a forget must rebuild."""


def _remove(path: Path) -> None:
    for leftover in (path, Path(f"{path}.wal"), *path.parent.glob(f"{path.name}.*.tmp*")):
        leftover.unlink(missing_ok=True)


@contextmanager
def read_model_held(lock: Path, busy: str) -> Iterator[None]:
    """The projector lock for the block, waited for up to LOCK_WAIT_S (a command holds it a
    moment, a follower for good); then `ReadModelHeldError(busy)`."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        with projector_lock(lock, wait=False) as held:
            if held:
                yield
                return
        if time.monotonic() > deadline:
            raise ReadModelHeldError(busy)
        time.sleep(0.1)


def rebuild_in_place(paths: ReadModelPaths, reader: LedgerReader) -> int:
    """Delete the working and published read models and project the ledger into new ones, under
    the projector lock; returns the events applied."""
    busy = (
        "a forget's keys are destroyed but another projector holds the read model, which still "
        "holds the forgotten words: stop `mind project --follow`, then run any `mind` command "
        "to finish the forget"
    )
    with read_model_held(paths.lock, busy):
        _remove(paths.working)
        _remove(paths.published)
        projector = Projector(paths.working)
        try:
            applied = projector.catch_up(reader, maintain=True)
            projector.publish(paths.published)
        finally:
            projector.close()
    return applied
