"""`mind doctor`, `--json` and `--fix` on real homes: sound, loosened, with a stale server
record, with a bad setting, without keys, and none at all; and the one warning a loose home
gives when it is opened."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mindledger.optional_parts import names
from tests.conftest import Result, subprocess_env

Cli = Callable[..., Result]


@pytest.fixture
def mind_home(cli: Cli, home: Path) -> Path:
    """A home with a mind that has had a turn and whose read model is current."""
    assert cli("init", "--name", "Echo").exit_code == 0
    turn = cli("turn", "--model", "mock", "--mock-reply", "Noted.", "The door code is 2291")
    assert turn.exit_code == 0, turn.output
    assert cli("project").exit_code == 0
    return home


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["status"] for c in report["checks"]}


def test_a_sound_home_passes_every_check_and_lists_every_optional_part(
    cli: Cli, mind_home: Path
) -> None:
    done = cli("doctor", "--json")

    assert done.exit_code == 0, done.output
    report = done.json()
    assert report["ok"] is True and report["fixed"] == []
    assert statuses(report) == {
        "home": "ok",
        "server": "ok",
        "settings": "ok",
        "mind": "ok",
        "ledger": "ok",
        "keys": "ok",
        "read model": "ok",
        "modes": "ok",
    }
    assert [p["name"] for p in report["parts"]] == names()
    for part in report["parts"]:
        assert set(part) == {"name", "present", "version", "detail", "enables", "install"}
        assert part["enables"] and part["install"]


def test_a_loose_home_fails_in_one_line_and_fix_makes_it_private(cli: Cli, mind_home: Path) -> None:
    mind_home.chmod(0o755)
    (mind_home / "ledger.sqlite").chmod(0o644)
    (mind_home / "readmodel.published.duckdb").chmod(0o664)

    found = cli("doctor")
    fixed = cli("doctor", "--fix", "--json")
    again = cli("doctor", "--json")

    assert found.exit_code == 1
    failing = [line for line in found.output.splitlines() if "FAIL" in line]
    assert len(failing) == 1
    assert "modes" in failing[0] and "the home folder is mode 755" in failing[0]
    assert "mind doctor --fix" in failing[0]
    assert fixed.exit_code == 0 and statuses(fixed.json())["modes"] == "ok"
    assert sorted(fixed.json()["fixed"]) == [
        "ledger.sqlite is mode 644, now private",
        "readmodel.published.duckdb is mode 664, now private",
        "the home folder is mode 755, now private",
    ]
    assert stat.S_IMODE(mind_home.stat().st_mode) == 0o700
    assert stat.S_IMODE((mind_home / "ledger.sqlite").stat().st_mode) == 0o600
    assert again.json()["ok"] is True and again.json()["fixed"] == []
    assert cli("verify").exit_code == 0  # nothing but modes changed


def test_a_stale_server_record_fails_and_fix_removes_it(cli: Cli, mind_home: Path) -> None:
    record = mind_home / "server.json"
    # pid 2**22 + 1 is above Linux's pid limit: no process can have it.
    record.write_text(json.dumps({"pid": 4194305, "url": "http://127.0.0.1:9", "started": ""}))
    record.chmod(0o600)

    found = cli("doctor", "--json")
    fixed = cli("doctor", "--fix", "--json")

    assert found.exit_code == 1
    assert statuses(found.json())["server"] == "fail"
    assert fixed.exit_code == 0 and statuses(fixed.json())["server"] == "ok"
    assert fixed.json()["fixed"] == ["removed the stale server.json"]
    assert not record.exists()


def test_a_home_with_a_bad_setting_is_still_examined(cli: Cli, mind_home: Path) -> None:
    (mind_home / "config.json").write_text('{"backend": "oracle"}')
    (mind_home / "config.json").chmod(0o600)

    done = cli("doctor", "--json")

    assert done.exit_code == 1
    found = statuses(done.json())
    assert found["settings"] == "fail"
    assert found["ledger"] == found["keys"] == found["read model"] == "skipped"
    assert found["modes"] == "ok" and found["server"] == "ok"


def test_a_home_without_its_key_store_fails_the_keys_check(cli: Cli, mind_home: Path) -> None:
    for path in mind_home.glob("keys.sqlite*"):
        path.unlink()

    done = cli("doctor")

    assert done.exit_code == 1
    assert any("FAIL keys: keys.sqlite is missing" in line for line in done.output.splitlines())


def test_a_folder_without_a_mind_says_so(cli: Cli, home: Path) -> None:
    missing = cli("doctor", "--json")
    home.mkdir()
    empty = cli("doctor", "--json")

    assert missing.exit_code == 1 and statuses(missing.json()) == {"home": "fail"}
    assert empty.exit_code == 1 and statuses(empty.json())["mind"] == "fail"
    assert statuses(empty.json())["ledger"] == "skipped"
    assert len(missing.json()["parts"]) == len(names())  # the parts are listed all the same


def test_a_read_model_behind_the_ledger_is_a_note_not_a_failure(cli: Cli, mind_home: Path) -> None:
    assert cli("commit", "Water the plants").exit_code == 0  # recorded, not yet projected

    done = cli("doctor", "--json")

    assert done.exit_code == 0
    assert statuses(done.json())["read model"] in ("ok", "behind")


def test_opening_a_home_others_may_read_warns_once_naming_doctor_fix(
    cli: Cli, mind_home: Path
) -> None:
    mind_home.chmod(0o755)

    first = cli("status")
    second = cli("status")

    warnings = [line for line in first.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1
    assert "other users may read" in warnings[0] and "mind doctor --fix" in warnings[0]
    assert "Warning:" not in second.stderr  # once per process


def test_fix_never_follows_a_link_out_of_the_home(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "shared-notes.txt"
    outside.write_text("for everyone\n")
    outside.chmod(0o644)
    (mind_home / "workspace" / "notes.txt").symlink_to(outside)
    (mind_home / "workspace" / "script.sh").write_text("echo hi\n")
    (mind_home / "workspace" / "script.sh").chmod(0o755)

    fixed = cli("doctor", "--fix", "--json")

    assert fixed.exit_code == 0, fixed.output
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644
    assert outside.read_text() == "for everyone\n"
    assert stat.S_IMODE((mind_home / "workspace" / "script.sh").stat().st_mode) == 0o700


def test_a_home_reached_through_a_link_is_judged_by_its_folder_not_the_link(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    link = tmp_path / "home-on-another-disk"
    link.symlink_to(mind_home)

    status = cli("--home", str(link), "status")
    doctor = cli("--home", str(link), "doctor", "--json")

    assert status.exit_code == 0 and "Warning:" not in status.stderr, status.stderr
    assert doctor.exit_code == 0 and statuses(doctor.json())["modes"] == "ok", doctor.output


def test_doctor_names_the_event_that_stops_projection(cli: Cli, mind_home: Path) -> None:
    from eventsourcing.persistence import StoredEvent

    from mindledger.compose import Home, open_mind

    app = open_mind(Home(mind_home))  # an event this version cannot project (an older bug's)
    app.recorder.insert_events(
        [StoredEvent(uuid.uuid4(), 1, "evil.unknown", b'{"timestamp":"2026-05-01T09:00:00Z"}')]
    )
    app.close()

    done = cli("doctor", "--json")

    assert done.exit_code == 1
    (check,) = [c for c in done.json()["checks"] if c["name"] == "read model"]
    assert check["status"] == "fail"
    assert "projection stops at position" in check["detail"] and "evil.unknown" in check["detail"]
    assert "mind log" in check["fix"]


def test_a_read_model_read_from_its_working_file_is_current_not_missing(
    cli: Cli, home: Path
) -> None:
    assert cli("init", "--name", "Echo").exit_code == 0
    assert cli("commit", "Water the plants").exit_code == 0
    assert cli("commitments").exit_code == 0  # read without a follower: no published copy
    assert not (home / "readmodel.published.duckdb").exists()

    done = cli("doctor", "--json")

    (check,) = [c for c in done.json()["checks"] if c["name"] == "read model"]
    assert check["status"] == "ok", check


@pytest.mark.parametrize(
    "args",
    [
        ("commit", "Water the ficus"),
        ("turn", "--model", "mock", "--mock-reply", "Noted.", "hello"),
        ("export", "--format", "jsonl", "{tmp}/export"),
        ("backup", "{tmp}/backup"),
    ],
    ids=["commit", "turn", "export", "backup"],
)
def test_a_loose_home_warns_once_per_command_however_often_the_command_opens_it(
    mind_home: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    mind_home.chmod(0o755)

    done = subprocess.run(
        [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
        + [a.format(tmp=tmp_path) for a in args],
        env=subprocess_env(mind_home, LITELLM_OFFLINE_MODE="true", MIND_NO_SERVER="1"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "other users may read" in line]
    assert len(warnings) == 1, done.stderr
