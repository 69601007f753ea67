"""`mind config set KEY VALUE` with any value: recorded only when finite, in range and the
right shape; anything else is one line that leaves the ledger as it was."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindledger.domain.settings import KEYS, SETTINGS
from tests.fuzz.harness import argv_texts, fuzz_step

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["inf", "-inf", "nan", "Infinity", "1e309", "-0", "1_000", "0x10", "9" * 5000]),
)
values = st.one_of(argv_texts, numbers)
pytestmark = pytest.mark.usefixtures("mind_home")


@pytest.mark.parametrize("key", KEYS)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(value=values)
def test_any_value_is_recorded_in_range_or_refused_in_one_line(
    key: str, value: str, mind_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a relative workspace resolves inside the test's folder

    run = fuzz_step(mind_home, ["config", "set", key, value, "--json"])

    if run.exit_code == 0 and key in SETTINGS:
        recorded = float(run.stdout.split('"value": "')[1].split('"')[0])
        assert math.isfinite(recorded) and SETTINGS[key][1](recorded), run.describe()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("threads.base_rate", "inf"),
        ("threads.base_rate", "nan"),
        ("threads.base_rate", "-1"),
        ("threads.cap", "1e309"),
        ("threads.top_k", "1e3"),
        ("threads.max_live_threads", "9" * 30),
        ("workspace", "/"),
        ("workspace", "/proc"),
        ("embedding.model", "../../etc/passwd"),
        ("embedding.model", "local/../../x"),
        ("embedding.model", "/abs/model"),
    ],
)
def test_a_hostile_value_is_one_line_naming_the_key(mind_home: Path, key: str, value: str) -> None:
    run = fuzz_step(mind_home, ["config", "set", key, value])

    assert run.exit_code == 1
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("Error: ")
    assert key in run.stderr or "workspace" in run.stderr
