"""Time is an input: the application asks a clock, never the system directly."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from domain.errors import InvalidInputError

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """The current UTC time."""
    return datetime.now(UTC)


def parse_time(value: str) -> datetime:
    """Parse an ISO-8601 time (`Z` allowed); naive times are taken as UTC."""
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(
            f"time {value!r} is not ISO-8601; write it like 2026-05-01T09:30:00Z"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def fixed_clock(at: datetime) -> Clock:
    """A clock that always answers `at` (MIND_NOW, tests, benchmarks)."""
    return lambda: at
