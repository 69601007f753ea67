"""Whether a knowledge item may answer directly: the assessment, a pure function of its facts.

In this order, with these reason names: disputed or retracted -> reject; never-direct -> reject;
not supported or verified -> `validation-insufficient`; confidence below the minimum ->
`confidence-below-threshold`; past its maximum age since it was last validated (not for an
immutable item, not with the policy `always`) -> `stale`; the caller asked for current data ->
`current-data-requested` (an immutable verified item still reuses). No reasons -> reuse;
otherwise revalidate. No item (or a deleted one) -> miss.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, Protocol

Decision = Literal["reuse", "revalidate", "reject", "miss"]
MIN_CONFIDENCE = 750_000


class Assessable(Protocol):
    """The facts of an item the assessment reads (a `domain.knowledge.Knowledge` has them)."""

    @property
    def state(self) -> str: ...
    @property
    def confidence_ppm(self) -> int: ...
    @property
    def freshness(self) -> str: ...
    @property
    def max_age_days(self) -> int | None: ...
    @property
    def reuse(self) -> str: ...
    @property
    def validated_at(self) -> datetime | None: ...
    @property
    def deleted(self) -> bool: ...


@dataclass(frozen=True)
class Assessment:
    """The decision and the reasons for it, in the order they were found."""

    decision: Decision
    reasons: list[str] = field(default_factory=list)


def assess(
    item: Assessable | None,
    now: datetime,
    current: bool = False,
    min_confidence: int = MIN_CONFIDENCE,
) -> Assessment:
    """Whether `item` may be reused as it stands at `now` (`current`: the caller wants current
    data)."""
    if item is None or item.deleted:
        return Assessment("miss")
    if item.state in ("disputed", "retracted"):
        return Assessment("reject", [item.state])
    if item.reuse == "never-direct":
        return Assessment("reject", ["never-direct"])
    reasons = []
    if item.state not in ("supported", "verified"):
        reasons.append("validation-insufficient")
    if item.confidence_ppm < min_confidence:
        reasons.append("confidence-below-threshold")
    if _stale(item, now):
        reasons.append("stale")
    if current and not (item.freshness == "immutable" and item.state == "verified"):
        reasons.append("current-data-requested")
    return Assessment("revalidate" if reasons else "reuse", reasons)


def _stale(item: Assessable, now: datetime) -> bool:
    if item.freshness == "immutable" or item.reuse == "always" or item.max_age_days is None:
        return False
    if item.validated_at is None:
        return True
    return now - item.validated_at > timedelta(days=item.max_age_days)
