"""Autonomy: the salience gate, ticks, and the metrics that tell tension from mere recency.

A tick is one decision of the gate, recorded whether it fires or not. A fired tick is a cycle:
it runs a turn with no user message whose context leads with the threads by tension.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID, uuid4

from mindledger.domain.context_port import AutonomyState, ThreadReads
from mindledger.domain.events import AggregateRoot, DomainEvent
from mindledger.domain.settings import thread_params
from mindledger.domain.tension import TensionParams

if TYPE_CHECKING:  # the tension metrics (`projections`' thread queries) need no application
    from mindledger.domain.application import Mind


def gate(state: AutonomyState, now: datetime, p: TensionParams) -> tuple[bool, str]:
    """Whether a tick fires, and why (boundaries are strict: equal to the threshold is not over)."""
    if state.last_cycle_at is None:
        return True, "no cycle was ever recorded"
    if p.floor_interval == 0:
        return True, "floor_interval is 0: every tick fires"
    if state.max_tension > p.cycle_threshold:
        return True, f"max tension {state.max_tension:.4f} > threshold {p.cycle_threshold:g}"
    hours = (now - state.last_cycle_at).total_seconds() / 3600
    if hours > p.floor_interval:
        return True, f"{hours:.2f} h since the last cycle > floor_interval {p.floor_interval:g} h"
    return False, (
        f"max tension {state.max_tension:.4f} <= threshold {p.cycle_threshold:g} and "
        f"{hours:.2f} h since the last cycle <= floor_interval {p.floor_interval:g} h"
    )


class Tick(AggregateRoot):
    """One decision of the salience gate, and what the cycle it started came to."""

    class Decided(DomainEvent):
        TOPIC = "mind.tick.decided"
        fired: bool
        reason: str
        max_tension: float
        top_thread: str | None
        live_threads: int
        cycle: int | None  # the cycle number when fired

    class Finished(DomainEvent):
        TOPIC = "mind.tick.finished"
        turn_id: str | None
        status: str  # the turn's status, or 'no_model'
        note: str

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.fired = False
        self.reason = ""
        self.cycle: int | None = None
        self.finished = False

    @classmethod
    def decide(cls, state: AutonomyState, now: datetime, p: TensionParams) -> Tick:
        """Record the gate's decision for `state` at `now`."""
        fired, reason = gate(state, now, p)
        tick = cls(uuid4())
        tick.trigger(
            cls.Decided,
            now,
            fired=fired,
            reason=reason,
            max_tension=round(state.max_tension, 6),
            top_thread=state.top_thread,
            live_threads=state.live_threads,
            cycle=state.cycles + 1 if fired else None,
        )
        return tick

    def finish(self, turn_id: str | None, status: str, note: str, at: datetime) -> None:
        """Record what the fired cycle came to."""
        self.trigger(self.Finished, at, turn_id=turn_id, status=status, note=note)

    def when_Decided(self, e: Decided) -> None:
        self.fired, self.reason, self.cycle = e.fired, e.reason, e.cycle

    def when_Finished(self, e: Finished) -> None:
        self.finished = True


@dataclass
class TickOutcome:
    """What `mind tick` did."""

    tick_id: UUID
    fired: bool
    reason: str
    max_tension: float
    top_thread: str | None
    cycle: int | None
    turn: object | None = None  # the TurnOutcome of a fired cycle
    status: str = "suppressed"
    note: str = ""


def run_tick(
    mind: Mind,
    threads: ThreadReads,
    now: datetime,
    run_turn: Callable[[], object] | None,
    unavailable: str | None,
) -> TickOutcome:
    """One autonomy cycle: decide, record, and (when fired and a model is there) run the turn.

    `run_turn` runs the autonomy turn and returns its outcome; `unavailable` says why no model
    can run (then the decision is recorded and the tick stops)."""
    params = thread_params(mind.identity().config)
    state = threads.autonomy_state(now)
    tick = Tick.decide(state, now, params)
    mind.record(tick)
    decided = TickOutcome(
        tick.id, tick.fired, tick.reason, state.max_tension, state.top_thread, tick.cycle
    )
    if not tick.fired:
        return decided
    if unavailable or run_turn is None:
        decided.status, decided.note = "no_model", unavailable or "no model configured"
        tick.finish(None, decided.status, decided.note, mind.clock())
        mind.record(tick)
        return decided
    turn = run_turn()
    decided.turn = turn
    decided.status = str(getattr(turn, "status", "unknown"))
    turn_id = getattr(turn, "turn_id", None)
    tick.finish(turn_id.hex if turn_id else None, decided.status, "", mind.clock())
    mind.record(tick)
    return decided


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties get their average rank); None under two items."""
    if len(a) != len(b) or len(a) < 2:
        return None
    ra, rb = _ranks(a), _ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    if va == 0 or vb == 0:
        return None
    return float(cov / (va * vb) ** 0.5)


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def reach(cycles: Sequence[tuple[datetime, str | None]], opened: dict[str, datetime]) -> int:
    """Cycles whose top thread changed from the previous cycle and was opened more than 10
    cycles before (more than 10 earlier cycles happened after the thread was opened)."""
    count, previous = 0, None
    times = [t for t, _ in cycles]
    for i, (_, top) in enumerate(cycles):
        if top is not None and top != previous and top in opened:
            since = sum(1 for t in times[:i] if t >= opened[top])
            if since > 10:
                count += 1
        previous = top
    return count
