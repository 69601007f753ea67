"""After a forget: the read model built anew, so no row, index term, payload or freed page of
the old files keeps a forgotten word (events whose keys are gone project as "[forgotten]" and
are not indexed).

Built anew from position 0, a purge cost a replay of the whole ledger (at 5k events ~7.5 s of a
9.9 s forget; the soak's forgets grew with the ledger). So each purge also leaves a base: a
copy of the read model it built, at the ledger head of that moment, made after the keys went
and so free of every word forgotten so far. The next purge whose forgotten events all come
after the base's position starts from a copy of it and replays only the events since (what a
full replay would give, since projection is a function of the ledger's prefix); one that
reaches back before it deletes it and replays from 0. The base is never written between
purges, so no word remembered after it can be in it.

A served forget builds its read model aside (`build_aside`) while turns go on, with what it will
destroy read as destroyed already, and once the keys are gone only catches that file up with the
events written meanwhile and swaps it in (`swap_in_aside`): turns wait for that, not for a
rebuild (`mindledger.forget_aside`). That swap keeps the base while it ends before what the
forget reached and is less than RENEW_AFTER events behind (copying the whole read model as a
new base each forget made forgets grow with the mind), and maintains the read model once (the
threads' tension, the term index), after the forget's own fact.

Where the base is renewed, it is renewed just before what the forget reached, not at the head:
the build leaves a copy of its aside as it stood there (`next_base_path`), which the swap puts
in place. Renewed at the head, the base was past the item of the next forget already waiting
(served clients remember and forget in turn), which then replayed from 0 and renewed it at the
head again, past the next one: in a served soak, forgets queued behind such replays.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.errors import ConflictError
from mindledger.domain.private_files import create_private_file
from mindledger.projections.engine.duckdb_files import checkpoint, close, connect
from mindledger.projections.engine.ports import LedgerReader
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.readmodel import ReadModelPaths, projector_lock
from mindledger.projections.engine.schema import schema_version
from mindledger.projections.engine.summary import move_summary, summary_path

LOCK_WAIT_S = 15.0
# A forget's swap renews the base once it is this many events behind: a copy of the whole read
# model each forget cost more than catching up this many events from an older base.
RENEW_AFTER = 100


class ReadModelHeldError(ConflictError):
    """Raised when another projector holds the read model a forget must rebuild."""


def _remove(path: Path) -> None:
    leftovers = (path, Path(f"{path}.wal"), summary_path(path))
    for leftover in (*leftovers, *path.parent.glob(f"{path.name}.*.tmp*")):
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


# What a forget whose keys are gone says when a follower holds the read model it must replace.
HELD_AT_A_FORGET = (
    "a forget's keys are destroyed but another projector holds the read model, which still "
    "holds the forgotten words: stop `mind project --follow`, then run any `mind` command "
    "to finish the forget"
)


def base_path(working: Path) -> Path:
    """Where the purges' base read model lives, beside the working file."""
    return working.with_name(f"{working.stem}.base{working.suffix}")


def _base_position(base: Path, reader: LedgerReader, first: int | None) -> int | None:
    """The base's position when a purge may start from it: it exists, was built for these
    tables from this ledger (its last event's hash is the ledger's at that position) and ends
    before `first`, the first position the forget reached (None: unknown, never)."""
    if first is None or not base.exists():
        return None
    try:
        con = connect(base, read_only=True)
        try:
            ((version,),) = con.execute("SELECT version FROM schema_version").fetchall()
            row = con.execute(
                "SELECT e.position, e.hash FROM tracking t JOIN events e "
                "ON e.position = t.position WHERE t.name = 'main'"
            ).fetchone()
        finally:
            close(con)
    except (duckdb.Error, ValueError):
        return None  # damaged or foreign: the purge replays from 0 and writes a new one
    if version != schema_version() or row is None or int(row[0]) >= first:
        return None
    position, digest = int(row[0]), str(row[1])
    ledger = next(iter(reader.rows(after=position - 1, batch=1, stop=position)), None)
    return position if ledger is not None and ledger.hash == digest else None


def next_base_path(working: Path) -> Path:
    """Where a forget's build leaves the base its swap renews the base with."""
    return working.with_name(f"{working.stem}.base.next{working.suffix}")


def aside_path(working: Path) -> Path:
    """Where a forget builds its read model aside, beside the working file."""
    return working.with_name(f"{working.stem}.aside{working.suffix}")


def build_aside(paths: ReadModelPaths, reader: LedgerReader, first_position: int | None) -> int:
    """A read model built at `aside_path` from the base where it may start (as
    `rebuild_in_place`), else from 0, caught up with `reader` (whose keys hide what a forget will
    destroy); returns its position. No lock: one forget at a time builds it, and no reader
    opens it."""
    aside, candidate = aside_path(paths.working), next_base_path(paths.working)
    _remove(aside)
    _remove(candidate)  # only this build's may be swapped in as the base
    try:
        return _build(aside, base_path(paths.working), candidate, reader, first_position)
    except BaseException:
        _remove(aside)  # a failed build (a full disk) leaves nothing beside the read model
        _remove(candidate)
        raise


def _build(
    aside: Path, base: Path, candidate: Path, reader: LedgerReader, first_position: int | None
) -> int:
    start = _base_position(base, reader, first_position)
    if start is not None:
        _copy(base, aside)
    projector = Projector(aside)
    try:
        if first_position is not None and (
            start is None or first_position - 1 - start > RENEW_AFTER
        ):
            # The base the swap will renew: the aside as it stands just before the first
            # event this forget reaches (`reader` hides nothing up to there), so free of every
            # word forgotten so far and of this forget's.
            projector.catch_up(reader, stop=first_position - 1)
            if projector.position() == first_position - 1 > 0:
                projector.publish(candidate)
        # Not maintained here: the swap does it once, after the events since (the forget's own
        # fact among them, which moves the threads' tension on).
        projector.catch_up(reader)
        position = projector.position()
        checkpoint(projector.con)
        return position
    finally:
        projector.close()


def swap_in_aside(
    paths: ReadModelPaths, reader: LedgerReader, first_position: int | None = None
) -> int:
    """The aside read model caught up with the ledger head and put in place of the working and
    published ones (whose files are deleted), under the projector lock; returns the events
    applied. The base is kept while it ends before `first_position` (it then holds nothing this
    forget destroyed, as when a purge starts from it), unless the build left a newer one that
    does (`next_base_path`: where the base was more than RENEW_AFTER events behind); with
    neither, the aside is copied as the new base."""
    aside = aside_path(paths.working)
    base, candidate = base_path(paths.working), next_base_path(paths.working)
    with read_model_held(paths.lock, HELD_AT_A_FORGET):
        kept = _base_position(base, reader, first_position)
        renewal = _base_position(candidate, reader, first_position)
        projector = Projector(aside)
        try:
            applied = projector.catch_up(reader)
            projector.refresh_tension()
            projector.sort_index()
            projector.publish(paths.published)  # checkpoints first: no WAL is left behind
            if renewal is not None and (kept is None or renewal > kept):
                os.replace(candidate, base)  # just before what this forget reached
            elif kept is None:
                projector.publish(base)
            # Else kept, even if far behind the head by now: the next forget's build renews it
            # before what that forget reaches (renewed at the head, it could be past it).
        finally:
            projector.close()
            _remove(candidate)
        _remove(paths.working)
        os.replace(aside, paths.working)
        move_summary(aside, paths.working)
        Path(f"{aside}.wal").unlink(missing_ok=True)  # empty after the checkpoint
    return applied


def _copy(source: Path, target: Path) -> None:
    """`source` copied to `target` (0600), replacing it atomically."""
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        create_private_file(tmp)  # copyfile keeps the mode of a file it truncates
        shutil.copyfile(source, tmp)
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk leaves no part of a copy in the home
        raise


def rebuild_in_place(
    paths: ReadModelPaths, reader: LedgerReader, first_position: int | None = None
) -> int:
    """Delete the working and published read models and build new ones, under the projector
    lock: from the base when it ends before `first_position` (the first ledger position whose
    words the forget destroyed), else from position 0; then the base is renewed. Returns the
    events applied."""
    base = base_path(paths.working)
    with read_model_held(paths.lock, HELD_AT_A_FORGET):
        start = _base_position(base, reader, first_position)
        _remove(aside_path(paths.working))  # a forget's, left by a crash
        _remove(next_base_path(paths.working))  # its build's renewal of the base, unused
        _remove(paths.working)
        _remove(paths.published)
        if start is None:
            _remove(base)  # it may hold what this forget reached
        else:
            _copy(base, paths.working)
        projector = Projector(paths.working)
        try:
            applied = projector.catch_up(reader, maintain=True)
            projector.publish(paths.published)  # checkpoints the working file first
            projector.publish(base)
        finally:
            projector.close()
    return applied
