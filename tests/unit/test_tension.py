"""The tension law: exact closed form, evaluation-independent, bounded over outages."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from mindledger.domain.tension import TensionParams, accrued, effective_hours, tension

T0 = datetime(2026, 5, 1, tzinfo=UTC)
P = TensionParams()


def exact(hours: float) -> float:
    return 0.15 * 72 / math.log(2) * (2 ** (hours / 72) - 1)


def test_tension_at_1_and_24_hours_is_the_exact_integral() -> None:
    assert accrued(1) == pytest.approx(exact(1), rel=1e-12)
    assert accrued(1) == pytest.approx(0.1507, abs=1e-4)
    assert accrued(24) == pytest.approx(exact(24), rel=1e-12)
    assert accrued(24) == pytest.approx(4.05, abs=0.01)


def test_tension_rises_every_hour_for_48_hours() -> None:
    values = [tension(T0, [], T0 + timedelta(hours=h), [])[0] for h in range(49)]

    assert all(b > a for a, b in pairwise(values))


def test_evaluating_hourly_or_once_gives_the_identical_value() -> None:
    once = tension(T0, [], T0 + timedelta(hours=48), [])[0]
    stepwise = sum(accrued(h + 1) - accrued(h) for h in range(48))

    assert once == pytest.approx(stepwise, rel=1e-12)


def test_the_rate_stops_doubling_at_64x_and_tension_is_capped() -> None:
    knee = 72 * 6
    assert accrued(knee + 10) - accrued(knee) == pytest.approx(0.15 * 64 * 10)
    assert tension(T0, [], T0 + timedelta(days=400), [])[0] == P.cap


def test_a_60_day_outage_counts_only_24_hours() -> None:
    last_event = T0 + timedelta(hours=2)
    now = last_event + timedelta(days=60)
    gaps = [(last_event, now)]

    value, hours = tension(T0, [], now, gaps)

    assert hours == pytest.approx(26)
    assert value == pytest.approx(exact(26))


def test_a_credit_subtracts_work_credit_floors_at_zero_and_resets_hours() -> None:
    credit_at = T0 + timedelta(hours=10)

    value, hours = tension(T0, [credit_at], T0 + timedelta(hours=11), [])

    assert hours == pytest.approx(1)
    assert value == pytest.approx(max(0.0, exact(10) - 1.0) + exact(1))


def test_a_resolved_thread_is_frozen() -> None:
    resolved = T0 + timedelta(hours=5)

    assert tension(T0, [], T0 + timedelta(days=30), [], resolved_at=resolved)[0] == (
        pytest.approx(exact(5))
    )


def test_effective_hours_ignore_short_gaps() -> None:
    gaps = [(T0 + timedelta(hours=1), T0 + timedelta(hours=20))]

    assert effective_hours(T0, T0 + timedelta(hours=30), gaps) == pytest.approx(30)
