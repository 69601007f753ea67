"""No write to a mind whose read model cannot be brought up to date.

A ledger event this mindledger cannot project (an older release's bug, a newer release's event)
stops every read past it; a write appended after it adds to a mind nobody can read. A turn
refuses first (its context catches the read model up before its message is saved); every other
append goes through `GuardedMind.save`, the one unit of work every use case's events pass
(`compose.open_mind`), which does the same check before the first event it appends: one line
naming the event's position and `mind doctor`, and nothing appended.

The check costs a read model's catch-up, so it is made once: after it, this mind's own appends
follow what was checked and need no other, and a read model a projector in this process has
already brought to the head (the turn's own session) needs none either. When another writer
appended meanwhile, the next save checks again; while a session of this process holds the
read model (a turn between its context and its message), the check is left to the next save.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mindledger.domain.application import Mind
from mindledger.domain.clock import Clock

if TYPE_CHECKING:
    from eventsourcing.persistence import Recording

    from mindledger.compose import Home
    from mindledger.projections.engine.ports import LedgerReader


class GuardedMind(Mind):
    """A `Mind` that appends only while its read model can be brought up to the ledger head."""

    # The library names an application's tables and settings prefix after its `name`, which a
    # subclass would otherwise change to its own: PostgreSQL would look for `guardedmind_events`.
    name = Mind.name

    def __init__(self, home: Home, env: dict[str, str], clock: Clock) -> None:
        super().__init__(env=env, clock=clock)
        self._guarded_home = home
        self._reader: LedgerReader | None = None
        self._vouched = -1  # the ledger position up to which appending is known to be safe

    def save(self, *objs: Any, **kwargs: Any) -> list[Recording[Any]]:
        """Check (see the module), then append as `Mind` does."""
        from mindledger.projections.engine.projector import reached
        from mindledger.projections.engine.readmodel import held_here

        home = self._guarded_home
        head = self._head()
        checked = head <= self._vouched or head <= reached(home.readmodel)
        # A session of this process holding the read model (a turn's context, caught up just
        # before) would make the check wait for itself: what another writer appended since is
        # checked by the next save.
        if not checked and not held_here(home.projector_lock):
            if projector_running_elsewhere(home):
                # A follower owns the read model and brings it up itself: waiting for it would
                # stall every write behind a slow (or stopped) follower. If it stops at an
                # event, it lets go of the lock and the next save checks here.
                pass
            else:
                require_projectable(home)
                checked = True
        projected = reached(home.readmodel)
        # Read again before refusing: another writer may have appended (and projected) since.
        if projected > head and projected > (now := self._head()):
            # The read model holds events the ledger no longer has (its last events and the
            # anchor file deleted): appended now, the new events took those positions and every
            # read skipped them as already projected, while verify said BROKEN.
            from mindledger.adapters.head_anchor import LedgerBehindAnchorError

            raise LedgerBehindAnchorError(
                f"nothing was written: the ledger ends at position {now}, before the "
                f"{projected} its read model has projected (events were deleted, or the read "
                "model is another ledger's); run `mind verify`"
            )
        if checked:
            self._vouched = max(self._vouched, head)
        recordings: list[Recording[Any]] = super().save(*objs, **kwargs)
        if checked and recordings and self._head() == head + len(recordings):
            self._vouched = head + len(recordings)  # this mind's own, after what was checked
        return recordings

    def _head(self) -> int:
        if self._reader is None:
            from mindledger.compose import open_reader

            self._reader = open_reader(self._guarded_home)
        return self._reader.head()[0]

    def close(self) -> None:
        """Release the ledger reader too."""
        if self._reader is not None:
            reader, self._reader = self._reader, None
            reader.close()
        super().close()


def projector_running_elsewhere(home: Home) -> bool:
    """Whether another process holds the projector lock now (a `mind project --follow`)."""
    from mindledger.projections.engine.readmodel import projector_lock

    with projector_lock(home.projector_lock, wait=False) as got:
        return not got


def require_projectable(home: Home) -> None:
    """Bring the read model up to the ledger head, or raise ProjectionError saying that nothing
    was written and where the projection stops."""
    from mindledger.compose import read_model
    from mindledger.projections.engine.projector import ProjectionError

    try:
        with read_model(home):
            return
    except ProjectionError as e:
        raise ProjectionError(
            f"{e.reason}; this mindledger cannot bring the read model past it (a newer "
            "mindledger may read it), so nothing was written",
            e.position,  # and the hint naming `mind doctor`
        ) from None
