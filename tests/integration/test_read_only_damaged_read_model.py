"""A damaged read model in a home this process cannot write: it cannot be rebuilt there, so a
read that needs it says so in one line with the fix (it warned "rebuilding it ... nothing is
lost" and then failed saying reads still work), a read that can use a current copy answers,
and nothing in the home changes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import subprocess_env
from tests.integration.test_read_only_home import _mind, _snapshot, _unprivileged_prefix


def test_status_in_a_read_only_home_names_the_damage_and_its_fix_in_one_line(
    tmp_path: Path,
) -> None:
    from mindledger.cli.main import mind

    home = tmp_path / "mind"
    writer = CliRunner(env={**subprocess_env(home, LITELLM_OFFLINE_MODE="true"), "MIND_NOW": None})
    for args in (["init", "--name", "Echo"], ["commit", "Water the ficus"], ["commitments"]):
        assert writer.invoke(mind, args, catch_exceptions=False).exit_code == 0
    with open(home / "readmodel.duckdb", "r+b") as f:  # the header block: checksum wrong
        f.seek(100)
        f.write(b"\xff" * 64)
    prefix = _unprivileged_prefix()
    for path in [home, *home.iterdir()]:
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        before = _snapshot(home)
        run = _mind(home, prefix)

        status = run("status")
        listed = run("commitments", "--json")
        doctor = run("doctor", "--json")

        assert status.returncode == 1
        [line] = status.stderr.splitlines()
        assert line.startswith("Error: the read model is damaged (Corrupt database file"), line
        assert f"cannot write {home} to rebuild it" in line and "mind replay --swap" in line
        assert status.stdout == ""
        assert listed.returncode == 0, listed.stderr  # the published copy is current
        assert [c["text"] for c in json.loads(listed.stdout)] == ["Water the ficus"]
        [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "read model"]
        assert doctor.returncode == 1 and check["status"] == "fail", doctor.stdout
        assert check["detail"].startswith("damaged: Corrupt database file"), check
        assert "mind replay --swap` where the home can be written" in check["fix"], check
        assert _snapshot(home) == before
    finally:
        for path in [home, *home.iterdir()]:
            path.chmod(path.stat().st_mode | 0o200)
