"""`mind config set KEY VALUE` with any value: recorded only when finite, in range and the
right shape; anything else is one line that leaves the ledger as it was."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindledger.domain.settings import KEYS, SETTINGS
from tests.fuzz.harness import argv_texts, fuzz_step, invoke

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(
        [
            *("inf", "-inf", "nan", "Infinity", "1e309", "-0", "-0.0", "1e-320", "5e-324"),
            *("1_000", "0x10", "9" * 5000),
        ]
    ),
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

    # A refused value exits 2, as click's refusals do; text that is not UTF-8 is refused
    # before any command runs, as for every command (exit 1).
    undecodable = run.exit_code == 1 and "is not valid UTF-8" in run.stderr
    assert run.exit_code in (0, 2) or undecodable, run.describe()
    if run.exit_code != 0:
        assert run.stderr.count("\n") == 1 and run.stderr.startswith("Error: "), run.describe()
    if run.exit_code == 0 and key in SETTINGS:
        recorded = float(run.stdout.split('"value": "')[1].split('"')[0])
        assert math.isfinite(recorded) and SETTINGS[key][1](recorded), run.describe()
        assert math.copysign(1.0, recorded) > 0, run.describe()  # never -0
        assert recorded == 0 or recorded >= 1e-6, run.describe()  # never a denormal


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("threads.base_rate", "inf"),
        ("threads.base_rate", "nan"),
        ("threads.base_rate", "-1"),
        ("threads.cap", "1e309"),
        ("threads.top_k", "1e3"),
        ("threads.max_live_threads", "9" * 30),
        ("threads.floor_interval", "-0"),
        ("threads.base_rate", "1e-320"),
        ("threads.work_credit", "5e-324"),
        ("workspace", "/"),
        ("workspace", "/proc"),
        ("workspace", str(Path.home())),
        ("workspace", "~"),
        ("embedding.model", "../../etc/passwd"),
        ("embedding.model", "local/../../x"),
        ("embedding.model", "/abs/model"),
    ],
)
def test_a_hostile_value_is_one_line_naming_the_key(mind_home: Path, key: str, value: str) -> None:
    before = invoke(["config", "show", "--json"]).stdout

    run = fuzz_step(mind_home, ["config", "set", key, value])  # and the ledger unchanged

    assert run.exit_code == 2
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("Error: ")
    assert key in run.stderr or "workspace" in run.stderr
    assert invoke(["config", "show", "--json"]).stdout == before


def test_a_workspace_holding_the_minds_own_files_is_refused(mind_home: Path) -> None:
    run = fuzz_step(mind_home, ["config", "set", "workspace", str(mind_home.parent)])

    assert run.exit_code == 2
    assert run.stderr.count("\n") == 1 and "this mind's own files" in run.stderr
