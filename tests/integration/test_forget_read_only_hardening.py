"""`mind forget` in a home this process cannot write: a dry run counts as anywhere, a real forget
is one `Error:` line, and a forget left unfinished there does not break reading (one warning
line says what may still show); nothing in the home changes. A writable process finishes it.

Root runs the read-only processes through `setpriv` (tests/integration/test_read_only_home.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import subprocess_env
from tests.e2e.forget_memories import CANARIES, files_holding
from tests.integration.test_read_only_home import Run, _mind, _snapshot, _unprivileged_prefix

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
CANARY = CANARIES["turn"]


def _told(home: Path) -> str:
    """A mind holding one turn with the canary, projected; returns the turn's id. Made
    in-process, in the environment the processes get: the forgets under test are those."""
    from click.testing import CliRunner

    from mindledger.cli.main import mind

    writer = CliRunner(env={**subprocess_env(home, LITELLM_OFFLINE_MODE="true"), "MIND_NOW": None})
    assert writer.invoke(mind, ["init", "--name", "Echo"], catch_exceptions=False).exit_code == 0
    turn = ["turn", f"My bank PIN is {CANARY} 0451", "--model", "mock", "--mock-reply", "Noted."]
    said = writer.invoke(mind, [*turn, "--no-server", "--json"], catch_exceptions=False)
    assert said.exit_code == 0, said.stderr
    assert writer.invoke(mind, ["commitments"], catch_exceptions=False).exit_code == 0
    return str(json.loads(said.stdout)["turn"])


def _read_only(home: Path) -> Run:
    prefix = _unprivileged_prefix()
    for path in [home, *home.iterdir()]:
        path.chmod(path.stat().st_mode & ~0o222)
    return _mind(home, prefix)


def _writable(home: Path) -> None:
    for path in [home, *home.iterdir()]:
        path.chmod(path.stat().st_mode | 0o200)


def test_a_dry_run_in_a_read_only_home_counts_and_a_real_forget_is_one_line(
    tmp_path: Path,
) -> None:
    home = tmp_path / "mind"
    told = _told(home)
    mind = _read_only(home)
    before = _snapshot(home)
    try:
        dry = mind("forget", "--turn", told, "--dry-run", "--json")
        real = mind("forget", "--turn", told, "--yes")
        after = _snapshot(home)
    finally:
        _writable(home)

    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["keys"] > 0 and "Traceback" not in dry.stderr
    assert real.returncode == 1
    lines = real.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), real.stderr
    assert "cannot write" in lines[0] and "nothing was forgotten" in lines[0]
    assert after == before


def test_an_unfinished_forget_in_a_read_only_home_warns_and_reads_go_on(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    told = _told(home)
    killed = subprocess.run(
        [*MIND, "forget", "--turn", told, "--yes"],
        env=subprocess_env(home, MIND_TEST_FORGET_CRASH="after-keys"),
        capture_output=True,
    )
    assert killed.returncode == -9 and (home / "forget.pending").exists()
    mind = _read_only(home)
    before = _snapshot(home)
    try:
        listed = mind("commitments", "--json")
        status = mind("status")
        dry = mind("forget", "--turn", told, "--dry-run")
        after = _snapshot(home)
    finally:
        _writable(home)
    finished = _mind(home, [])("commitments")

    for result in (listed, status, dry):
        assert result.returncode == 0, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Warning: "), result.stderr
        assert "unfinished" in lines[0] and "writable" in lines[0]
    assert json.loads(listed.stdout) == []
    assert after == before
    assert finished.returncode == 0 and finished.stderr == "", finished.stderr
    assert not (home / "forget.pending").exists()
    assert files_holding(home, CANARY) == []
