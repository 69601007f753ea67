"""Shared fixtures: every test gets its own MIND_HOME under tmp_path and a fixed clock."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from mindledger.adapters.memory_ledger import MEMORY_ENV
from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.cli.main import mind as mind_command
from mindledger.domain.application import Mind
from mindledger.domain.clock import fixed_clock

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
REPO = Path(__file__).resolve().parent.parent
LOCOMO = REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"

# Every property in the suite is about behaviour, never time: on a busy machine (two cores shared
# by several suites) an example or its data generation can take seconds, which is not a failure.
# The suite runs a few examples per property with a fixed seed, so every run (one file or the whole
# suite, any worker) is the same run; bench/fuzz.py sets MIND_FUZZ_EXAMPLES to run many more with
# fresh randomness. A test's own @settings(max_examples=...) still wins.
FUZZ_EXAMPLES = int(os.environ.get("MIND_FUZZ_EXAMPLES", "0") or 0)
settings.register_profile(
    "mind",
    max_examples=FUZZ_EXAMPLES or 4,
    deadline=None,
    derandomize=not FUZZ_EXAMPLES,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("mind")

# The suite runs every command in-process and never starts a background server (README, "The
# background server"); the tests about the fast path unset it for their own processes.
os.environ["MIND_NO_SERVER"] = "1"


def sealed_text_changed(state: bytes, field: str = "text") -> bytes:
    """A stored state with one character of its sealed `field`'s ciphertext changed: the
    tampering an edited word was before fields were sealed."""
    decoded = json.loads(state)
    sealed = decoded[field]["c"]
    decoded[field]["c"] = ("B" if sealed[0] == "A" else "A") + sealed[1:]
    return canonical_json(decoded)


@pytest.fixture
def app() -> Mind:
    """An initialised mind on in-memory persistence, at a fixed time."""
    mind = Mind(env=dict(MEMORY_ENV), clock=fixed_clock(T0))
    mind.init("Echo", "ledger-under-test")
    return mind


@dataclass
class Result:
    """What a CLI invocation did."""

    exit_code: int
    output: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.output)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh MIND_HOME (not yet initialised) with MIND_NOW fixed."""
    path = tmp_path / "mind"
    monkeypatch.setenv("MIND_HOME", str(path))
    monkeypatch.setenv("MIND_NOW", "2026-05-01T09:00:00Z")
    monkeypatch.delenv("MIND_BACKEND", raising=False)
    return path


@pytest.fixture
def cli(home: Path) -> Callable[..., Result]:
    """Run `mind ARGS...` in-process against the test home."""
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Result:
        r = runner.invoke(mind_command, list(args), input=input, catch_exceptions=False)
        return Result(r.exit_code, r.stdout, r.stderr)

    return run


@pytest.fixture
def mind_home(cli: Callable[..., Result], home: Path) -> Iterator[Path]:
    """An initialised SQLite mind."""
    assert cli("init", "--name", "Echo").exit_code == 0
    yield home


def subprocess_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for running `mind` or helper scripts as real processes."""
    env = dict(os.environ, MIND_HOME=str(home), PYTHONPATH=str(REPO))
    env.pop("MIND_NOW", None)
    env.update(extra)
    return env


def item_id_at(home: Path, question: str) -> str:
    """The id the mind at `home` gives the item of `question` (keyed with its own secret)."""
    from mindledger.compose import Home, home_text_keys
    from mindledger.domain.knowledge import intent_hash, item_id

    return item_id(intent_hash(question, home_text_keys(Home(home))))


def pytest_configure(config: pytest.Config) -> None:
    """In CI the PostgreSQL contract cases must run, never silently skip."""
    if os.environ.get("CI") == "true" and not os.environ.get("MIND_TEST_POSTGRES_DSN"):
        raise pytest.UsageError(
            "CI=true but MIND_TEST_POSTGRES_DSN is unset: start PostgreSQL "
            "with scripts/postgres-test-server.sh (make test does)"
        )
