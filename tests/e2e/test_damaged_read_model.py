"""A damaged read model (flipped bytes, cut short, emptied, deleted; the working file or the
published copy) is rebuilt from the ledger by the next command that meets it, with one warning
line: reads answer as before, the ledger is unchanged and verifies, and a write that met it
stops in one line and works when run again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mindledger.cli.main import mind as mind_command
from tests.conftest import REPO

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]


def mind(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIND_")}
    env.update(
        MIND_HOME=str(home),
        MIND_NOW="2026-05-01T09:00:00Z",
        MIND_NO_SERVER="1",
        LITELLM_OFFLINE_MODE="true",
        PYTHONPATH=str(REPO),
    )
    return subprocess.run([*MIND, *args], env=env, capture_output=True, text=True, timeout=300)


def here(home: Path, *args: str) -> Result:
    """`mind ARGS` in this process with the environment `mind` gets above: for the set-up and
    the reads before any damage (the commands that meet the damage run as processes: one that
    failed inside DuckDB must not take the test runner with it)."""
    env: dict[str, str | None] = {"MIND_HOME": str(home), "MIND_NOW": "2026-05-01T09:00:00Z"}
    env.update(MIND_NO_SERVER="1", LITELLM_OFFLINE_MODE="true", MIND_BACKEND=None)
    return CliRunner(env=env).invoke(mind_command, list(args), catch_exceptions=False)


def damage(path: Path, how: str) -> None:
    if how == "flipped":
        with open(path, "r+b") as f:  # the header block: its checksum no longer matches
            f.seek(100)
            f.write(b"\xff" * 64)
    elif how == "cut short":
        os.truncate(path, 5000)
    elif how == "emptied":
        os.truncate(path, 0)
    else:
        path.unlink()


def ledger_events(home: Path, ran: Callable[..., Any] = mind) -> int:
    return len(json.loads(ran(home, "log", "--json", "--limit", "1000").stdout))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("made") / "mind"
    assert here(home, "init", "--name", "Echo").exit_code == 0
    assert here(home, "commit", "Send the boiler report").exit_code == 0
    turn = here(home, "turn", "The boiler code is 4471", "--model", "mock", "--mock-reply", "Ok")
    assert turn.exit_code == 0, turn.stderr
    assert here(home, "project").exit_code == 0  # the published copy exists too
    assert (home / "readmodel.published.duckdb").exists()
    return home


@pytest.mark.parametrize("how", ["flipped", "cut short", "emptied", "deleted"])
@pytest.mark.parametrize("which", ["readmodel.duckdb", "readmodel.published.duckdb"])
def test_a_read_rebuilds_a_damaged_read_model_and_answers(
    made: Path, tmp_path: Path, which: str, how: str
) -> None:
    home = tmp_path / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)
    before = here(home, "recall", "boiler", "--json")
    events = ledger_events(home, here)
    damage(home / which, how)

    after = mind(home, "recall", "boiler", "--json")

    assert after.returncode == 0, after.stderr
    warnings = after.stderr.strip().splitlines()
    assert len(warnings) <= 1 and "Traceback" not in after.stderr
    if warnings or (which == "readmodel.duckdb" and how in ("flipped", "cut short")):
        assert len(warnings) == 1, after.stderr  # the working file is read: damage is met
        # (an emptied or deleted file is simply made again by the projector, silently)
        assert warnings[0].startswith("Warning: the read model is damaged")
    assert json.loads(after.stdout) == json.loads(before.stdout)
    # The read model is whole again: what follows reads it in this process.
    listed = here(home, "commitments", "--json")
    assert listed.exit_code == 0 and listed.stderr == ""
    assert [c["text"] for c in json.loads(listed.stdout)] == ["Send the boiler report"]
    assert ledger_events(home, here) == events
    assert json.loads(here(home, "verify", "--json").stdout)["ok"] is True


@pytest.mark.parametrize("how", ["flipped", "cut short", "emptied"])
def test_a_turn_that_meets_a_damaged_read_model_stops_in_one_line_then_works(
    made: Path, tmp_path: Path, how: str
) -> None:
    home = tmp_path / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)
    damage(home / "readmodel.duckdb", how)

    turn = mind(home, "turn", "Hello again", "--model", "mock", "--mock-reply", "Hi")

    assert "Traceback" not in turn.stderr
    if turn.returncode != 0:
        lines = turn.stderr.strip().splitlines()
        assert lines[0].startswith("Warning: the read model is damaged")
        assert len(lines) == 2 and lines[1].startswith("Error: the read model was damaged")
        turn = mind(home, "turn", "Hello again", "--model", "mock", "--mock-reply", "Hi")
    assert turn.returncode == 0, turn.stderr
    assert json.loads(here(home, "verify", "--json").stdout)["ok"] is True


def test_doctor_names_a_damaged_read_model_and_the_command_that_rebuilds_it(
    made: Path, tmp_path: Path
) -> None:
    home = tmp_path / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)
    damage(home / "readmodel.duckdb", "flipped")

    doctor = mind(home, "doctor", "--json")

    assert "Traceback" not in doctor.stderr
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "read model"]
    assert check["status"] == "fail" and check["detail"].startswith("damaged: "), check
    assert "mind replay --swap" in check["fix"]
    swapped = mind(home, "replay", "--swap")
    assert swapped.returncode == 0, swapped.stderr
    after = json.loads(mind(home, "doctor", "--json").stdout)["checks"]
    assert [c["status"] for c in after if c["name"] == "read model"] == ["ok"]


def plain_mind(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mind ARGS` with no setting but the home: `status` may print from the read model's
    summary without DuckDB (`mindledger.quick_reads`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIND_")}
    env.update(MIND_HOME=str(home), MIND_NO_SERVER="1", PYTHONPATH=str(REPO))
    return subprocess.run([*MIND, *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("how", ["flipped", "cut short", "emptied"])
def test_status_does_not_vouch_for_a_damaged_read_model_from_its_summary(
    made: Path, tmp_path: Path, how: str
) -> None:
    home = tmp_path / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)
    healthy = plain_mind(home, "status", "--json")
    damage(home / "readmodel.duckdb", how)

    doctor = mind(home, "doctor", "--json")  # it reports, and repairs nothing
    status = plain_mind(home, "status", "--json")
    after = mind(home, "doctor", "--json")

    assert healthy.returncode == 0 and healthy.stderr == "", healthy.stderr
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    assert json.loads(status.stdout) == json.loads(healthy.stdout)  # read again, rebuilt
    warnings = status.stderr.strip().splitlines()
    if how != "emptied":  # an empty file is simply made again (silently, as a new one is)
        assert len(warnings) == 1, status.stderr
        assert warnings[0].startswith("Warning: the read model is damaged")
        assert "rebuilding it from the ledger" in warnings[0]
    assert len(warnings) <= 1, status.stderr
    [found] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "read model"]
    if how != "emptied":
        assert found["status"] == "fail" and found["detail"].startswith("damaged: "), found
        assert "mind replay --swap" in found["fix"]
    [mended] = [c for c in json.loads(after.stdout)["checks"] if c["name"] == "read model"]
    assert mended["status"] == "ok", mended  # the status rebuilt it
    assert json.loads(here(home, "verify", "--json").stdout)["ok"] is True
