"""A forget's new read model, built aside while turns go on.

A forget excludes turns from before its keys go until the read model no longer holds what they
sealed (a turn's prompt quotes what it reads, and is recorded under a key of its own). Rebuilt
inside that exclusion, the read model made every turn wait for a rebuild: served under a mix,
turns queued behind forgets. So a forget first plans and builds its read model aside, with the
keys it will destroy hidden from the aside's reader: that file then holds what the read model
will hold once they are gone. Inside the exclusion it plans again over the whole ledger (a turn
may have quoted what it names meanwhile); when the new plan keeps every key of the first and
each key it adds was first used after the aside's position, the aside is caught up with the
events since and swapped in; otherwise it is deleted and the read model rebuilt as before.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mindledger.compose import Home, open_keys, open_reader, read_model_paths
from mindledger.domain.errors import MindError

if TYPE_CHECKING:
    from mindledger.adapters.forget_plan import ForgetPlan, Planner
    from mindledger.domain.forgetting import Selector

BUILD_LOCK = "forget.build.lock"  # one forget at a time per home, from its plan to its end


@dataclass(frozen=True)
class Aside:
    """A read model built aside up to `position` with `plan`'s keys hidden; `planner` (where
    the plan scanned the ledger) plans again by scanning only what was written since."""

    plan: ForgetPlan
    position: int
    planner: Planner | None

    def serves(self, plan: ForgetPlan) -> bool:
        """Whether the aside is what a rebuild after destroying `plan`'s keys would give up to
        its position: no key it hid is spared, and no key added was used by then."""
        added = plan.keys - self.plan.keys
        return self.plan.keys <= plan.keys and all(
            plan.key_first.get(key, 0) > self.position for key in added
        )


@contextlib.contextmanager
def one_forget(home: Home) -> Iterator[bool]:
    """The lock a forget holds from its plan to its end (a second forget waits); yields False
    where the home cannot be written (no aside then: the forget's own lock refuses it)."""
    try:
        fd = os.open(home.path / BUILD_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def build(home: Home, selector: Selector) -> Aside | None:
    """Plan the forget and build its read model aside (the caller holds `one_forget`); None
    where the plan finds nothing to destroy or refuses the selector (the forget proper says
    so, inside the exclusion)."""
    from mindledger.projections.engine.purge import build_aside

    reader = open_reader(home)
    try:
        keys = open_keys(home)
        try:
            plan, planner = plan_of(home, reader, selector)
            existing = keys.get(plan.keys) if plan.keys else {}
        finally:
            keys.close()
    except MindError:
        return None
    finally:
        reader.close()
    if not existing:
        return None
    hidden = open_reader(home, hidden=plan.keys)
    try:
        position = build_aside(read_model_paths(home), hidden, plan.first_position)
    except BaseException:
        discard(home)
        raise
    finally:
        hidden.close()
    return Aside(plan, position, planner)


def plan_of(home: Home, reader: Any, selector: Selector) -> tuple[ForgetPlan, Planner | None]:
    """The forget's plan, from the home's index of what each event names where the reader can
    fetch events by position (the planner is then None: a second plan looks up again), else
    by a scan of the whole ledger (its planner can scan on from where it ended)."""
    from mindledger.adapters.forget_index import INDEX_FILE, ForgetIndex, plan_by_lookup
    from mindledger.adapters.forget_plan import Planner

    if selector.kind != "before" and hasattr(reader, "rows_at"):
        index = ForgetIndex(home.path / INDEX_FILE)
        try:
            found = plan_by_lookup(reader, selector, index)
        finally:
            index.close()
        if found is not None:
            return found, None
    # `before` reaches every event up to a time, and a selector may link to much of the
    # ledger: a scan then reads no more than the lookups would.
    planner = Planner(selector)
    planner.scan(reader)
    return planner.plan(reader), planner


def swap_in(home: Home, first_position: int | None) -> None:
    """The aside caught up and put in place of the read model (the keys are gone now; the
    first position whose words they sealed says whether the base may stay)."""
    from mindledger.projections.engine.purge import swap_in_aside

    reader = open_reader(home)
    try:
        swap_in_aside(read_model_paths(home), reader, first_position)
    finally:
        reader.close()


def discard(home: Home) -> None:
    """Delete an aside read model and the base its build left (unused, or left by a crash)."""
    from mindledger.projections.engine.purge import aside_path, next_base_path
    from mindledger.projections.engine.summary import summary_path

    working = read_model_paths(home).working
    aside, renewal = aside_path(working), next_base_path(working)
    for path in (aside, aside.with_name(f"{aside.name}.wal"), summary_path(aside), renewal):
        path.unlink(missing_ok=True)
