"""Time is an input: the application asks a clock, never the system directly."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from mindledger.domain.errors import InvalidInputError

Clock = Callable[[], datetime]

# A fixed time outside these years is a typing slip, not a plan (year 1 broke the activity plot).
EARLIEST_YEAR, LATEST_YEAR = 1970, 2999


def system_clock() -> datetime:
    """The current UTC time."""
    return datetime.now(UTC)


def parse_time(value: str) -> datetime:
    """Parse an ISO-8601 time (`Z` allowed); naive times are taken as UTC."""
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # overflow: a time zone pushed it past year 1 or 9999
        raise InvalidInputError(
            f"time {value!r} is not ISO-8601; write it like 2026-05-01T09:30:00Z"
        ) from None


def parse_fixed_time(value: str) -> datetime:
    """A time to fix the clock at: ISO-8601, in the years EARLIEST_YEAR to LATEST_YEAR."""
    at = parse_time(value)
    if not EARLIEST_YEAR <= at.year <= LATEST_YEAR:
        raise InvalidInputError(
            f"time {value!r} is outside the years {EARLIEST_YEAR} to {LATEST_YEAR}"
        )
    return at


def fixed_clock(at: datetime) -> Clock:
    """A clock that always answers `at` (MIND_NOW, tests, benchmarks)."""
    return lambda: at


def no_earlier_than_head(
    at: datetime, head_time: Callable[[], datetime | None], name: str, to_allow: str
) -> Clock:
    """A clock fixed at `at` that refuses, when first asked, to answer a time before the ledger's
    latest event (`head_time`): recording it would put the history out of order.

    Asked lazily, so commands that record nothing never read the head. `name`: how the time
    was set (MIND_NOW, --now); `to_allow`: how to allow it anyway."""
    checked = False

    def clock() -> datetime:
        nonlocal checked
        if not checked:
            head = head_time()
            if head is not None and at < head:
                raise InvalidInputError(
                    f"{name} {at.isoformat()} is before the ledger's latest event "
                    f"({head.isoformat()}); {to_allow}"
                )
            checked = True
        return at

    return clock
