"""A home on a read-only filesystem still verifies, with both anchors read."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, subprocess_env

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]


def read_only(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mind ARGS` with HOME's folder mounted read-only (a private mount namespace, as root)."""
    inner = " ".join(f"'{a}'" for a in [*MIND, *args])
    script = f"mount --bind '{home}' '{home}' && mount -o remount,bind,ro '{home}' && {inner}"
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script],
        env=subprocess_env(home),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def can_mount_read_only(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    script = f"mount --bind '{probe}' '{probe}' && mount -o remount,bind,ro '{probe}'"
    return (
        subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True).returncode == 0
    )


def test_a_read_only_home_without_its_journal_files_still_verifies(tmp_path: Path) -> None:
    if not can_mount_read_only(tmp_path):
        pytest.skip("needs unshare and mount (root in a mount namespace)")
    home = tmp_path / "mind"
    env = subprocess_env(home)
    for args in (["init"], ["commit", "Water the plants"], ["commitments"]):
        subprocess.run([*MIND, *args], env=env, cwd=REPO, check=True, capture_output=True)
    con = sqlite3.connect(home / "ledger.sqlite")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()  # the last connection removes -wal and -shm, as after any clean exit

    result = read_only(home, "verify")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("OK: 2 events")
    assert "  anchor read model (position 2): ok" in result.stdout
