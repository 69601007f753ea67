"""The tension law: pressure that grows with time since a thread's last credited work.

rate(h) = base_rate * clamp(2^(h / half_life), 1, 64), h = hours since the last credited work.
Tension is the exact integral of that rate, so its value at time T does not depend on how often
it was evaluated. Time without any recorded liveness (no event at all in the ledger) counts at
most `max_gap_hours` per gap, so an outage does not turn every thread into an emergency.
A credit subtracts `work_credit` (floor 0) and resets h; a resolved thread is frozen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

CEILING = 64.0


@dataclass(frozen=True)
class TensionParams:
    """The law's constants and the autonomy settings (defaults from the threads issue).

    Each mind can change them (`mind config set threads.KEY VALUE`, recorded as events); the
    settings in effect at time T apply to every thread's whole history when tension is
    evaluated at T, so the value stays a pure function of the ledger and T.
    """

    base_rate: float = 0.15
    half_life: float = 72.0
    cap: float = 1000.0
    work_credit: float = 1.0
    max_gap_hours: float = 24.0
    cycle_threshold: float = 2.0
    floor_interval: float = 6.0
    max_live_threads: int = 40
    top_k: int = 5


def accrued(hours: float, p: TensionParams = TensionParams()) -> float:
    """The integral of the rate from h = 0 to h = `hours` (closed form)."""
    if hours <= 0:
        return 0.0
    knee = p.half_life * math.log2(CEILING)  # where 2^(h/half_life) reaches the ceiling
    below = min(hours, knee)
    value = p.base_rate * p.half_life / math.log(2) * (2 ** (below / p.half_life) - 1)
    return value + p.base_rate * CEILING * max(0.0, hours - knee)


def effective_hours(
    start: datetime,
    end: datetime,
    gaps: Sequence[tuple[datetime, datetime]],
    p: TensionParams = TensionParams(),
) -> float:
    """Hours from `start` to `end`, each liveness gap inside counting at most max_gap_hours."""
    return _effective(start.timestamp(), end.timestamp(), _seconds(gaps), p)


def _seconds(gaps: Sequence[tuple[datetime, datetime]]) -> list[tuple[float, float]]:
    return [(a.timestamp(), b.timestamp()) for a, b in gaps]


def _effective(
    start: float, end: float, gaps: Sequence[tuple[float, float]], p: TensionParams
) -> float:
    if end <= start:
        return 0.0
    total = (end - start) / 3600
    for gap_start, gap_end in gaps:
        overlap = (min(end, gap_end) - max(start, gap_start)) / 3600
        if overlap > p.max_gap_hours:
            total -= overlap - p.max_gap_hours
    return total


def tension(
    opened_at: datetime,
    credits: Sequence[datetime],
    as_of: datetime,
    gaps: Sequence[tuple[datetime, datetime]],
    resolved_at: datetime | None = None,
    p: TensionParams = TensionParams(),
) -> tuple[float, float]:
    """(tension, effective hours since the last credited work) of one thread at `as_of`."""
    return tension_at(
        opened_at.timestamp(),
        [c.timestamp() for c in credits],
        as_of.timestamp(),
        _seconds(gaps),
        resolved_at.timestamp() if resolved_at else None,
        p,
    )


def tension_at(
    opened_at: float,
    credits: Sequence[float],
    as_of: float,
    gaps: Sequence[tuple[float, float]],
    resolved_at: float | None = None,
    p: TensionParams = TensionParams(),
) -> tuple[float, float]:
    """`tension` with every time in POSIX seconds (what the read side computes with: no
    datetime objects per row)."""
    end = min(as_of, resolved_at) if resolved_at is not None else as_of
    value, anchor = 0.0, opened_at
    for credited in sorted(c for c in credits if c <= end):
        value = min(p.cap, value + accrued(_effective(anchor, credited, gaps, p), p))
        value, anchor = max(0.0, value - p.work_credit), credited
    hours = _effective(anchor, end, gaps, p)
    return min(p.cap, value + accrued(hours, p)), hours
