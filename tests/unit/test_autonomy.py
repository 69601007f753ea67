"""The salience gate's strict boundaries, the settings parser and the discriminator metrics."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from mindledger.domain.autonomy import gate, reach, spearman
from mindledger.domain.context_port import AutonomyState
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.settings import check_setting, thread_params
from mindledger.domain.tension import TensionParams

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)
P = TensionParams()


def state(tension: float, hours_since_cycle: float | None) -> AutonomyState:
    last = None if hours_since_cycle is None else NOW - timedelta(hours=hours_since_cycle)
    return AutonomyState(tension, None, 1, last, 0 if last is None else 3)


@pytest.mark.parametrize(
    ("tension", "hours", "fires"),
    [
        (0.0, None, True),  # no cycle ever
        (2.0, 6.0, False),  # exactly at both boundaries: not over either
        (2.000001, 0.0, True),  # over the threshold
        (0.0, 6.0001, True),  # over the floor interval
        (1.99, 5.99, False),
    ],
)
def test_gate_boundaries_are_strict(tension: float, hours: float | None, fires: bool) -> None:
    fired, reason = gate(state(tension, hours), NOW, P)

    assert fired is fires
    assert reason


def test_a_zero_floor_interval_always_fires() -> None:
    assert gate(state(0.0, 0.0), NOW, replace(P, floor_interval=0))[0] is True


def test_a_suppressed_tick_says_why() -> None:
    fired, reason = gate(state(1.5, 2.0), NOW, P)

    assert not fired
    assert reason == (
        "max tension 1.5000 <= threshold 2 and 2.00 h since the last cycle <= floor_interval 6 h"
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("threads.base_rate", "abc", "must be a number"),
        ("threads.base_rate", "0", "out of range"),
        ("threads.top_k", "2.5", "must be a whole number"),
        ("threads.max_live_threads", "0", "out of range"),
        ("threads.cap", "nan", "out of range"),
        ("threads.speed", "1", "unknown setting"),
        ("workspace", "  ", "directory path"),
        ("embedding.model", "a\nb", "one line"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(key: str, value: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        check_setting(key, value)


def test_settings_override_the_defaults() -> None:
    params = thread_params({"threads.top_k": "3", "threads.half_life": "24.0", "workspace": "/x"})

    assert (params.top_k, params.half_life, params.base_rate) == (3, 24.0, 0.15)


def test_spearman_matches_known_values() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)
    assert spearman([1, 1, 2], [1, 2, 3]) == pytest.approx(0.8660254)
    assert spearman([1], [1]) is None


def test_reach_counts_a_new_top_thread_opened_more_than_ten_cycles_before() -> None:
    opened = {"old": NOW - timedelta(days=30), "new": NOW + timedelta(hours=11.5)}
    cycles = [(NOW + timedelta(hours=h), "new" if h < 12 else "old") for h in range(24)]
    cycles[0] = (cycles[0][0], None)

    # 'old' becomes top at cycle 13 (12 earlier cycles since it opened): counted once;
    # 'new' was top from cycle 2 on, opened less than 10 cycles before: not counted.
    assert reach(cycles, opened) == 1
