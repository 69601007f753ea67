"""`mind backup DEST` with any DEST a command line can carry: a verified copy or one `Error:`
line, never a traceback, never a changed ledger, and nothing written when it refuses."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import argv_texts, assert_well_behaved, invoke, ledger_state

DEPTH = 8  # folders between the fuzz root and the working folder: `..` stays inside the root
dests = st.one_of(
    argv_texts,
    st.builds(lambda a, b: f"{a}/{b}", argv_texts, argv_texts),
    st.builds(lambda n, t: "../" * n + t, st.integers(0, DEPTH), argv_texts),
)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(dest=dests)
@pytest.mark.usefixtures("mind_home")
def test_any_dest_ends_in_a_verified_copy_or_one_line_and_writes_nothing_else(
    home: Path, dest: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cwd = root.joinpath(*[f"d{i}" for i in range(DEPTH)], "cwd")
        cwd.mkdir(parents=True)
        (cwd / "taken").mkdir()
        (cwd / "taken" / "notes.txt").write_text("mine")
        with contextlib.chdir(cwd):
            aimed = Path(os.path.abspath(os.path.expanduser(dest or ".")))
            assume(aimed.is_relative_to(root))  # never a backup outside the fuzz root
            before, files = ledger_state(home), _files(root)

            run = invoke(["backup", dest, "--json"])

        assert_well_behaved(run)
        assert ledger_state(home) == before
        if run.exit_code != 0:
            assert _files(root) == files, run.describe()
            return
        copy = invoke(["--home", str(aimed), "verify", "--json"])
        assert copy.exit_code == 0, copy.describe()
        made = [root / f for f in _files(root) if f not in files]
        assert all(p in (aimed, *aimed.parents) or p.is_relative_to(aimed) for p in made), made
