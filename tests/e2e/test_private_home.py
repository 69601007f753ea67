"""A home is private whatever the umask: the folder 0700, every file in it 0600, exports of the
ledger, the transcript and the tables 0600 in a new 0700 folder.

The commands run, one after another as `mind` runs each, in a real process started with umask 022
(set in the child only: the umask is process-wide, and the test workers run other tests
meanwhile). One process for them all, not one each: each would pay the start-up again for the
same umask, and no command sets the umask for the next (the product only ever restores it)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO

Run = Callable[..., subprocess.CompletedProcess[str]]
NOBODY = 65534

# Each ARGS list as `mind ARGS...` would run it (its entry point, its exit), in order; the first
# that fails ends the process with its exit code.
COMMANDS = """
import json, sys
from mindledger.cli.main import main
for argv in json.loads(sys.argv[1]):
    sys.argv = ["mind", *argv]
    try:
        main()
    except SystemExit as e:
        if e.code not in (0, None):
            print(f"mind {' '.join(argv)}: exit {e.code}", file=sys.stderr)
            sys.exit(e.code if isinstance(e.code, int) else 1)
"""


def _umask_022() -> None:
    os.umask(0o022)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """`mind ARGS...` for each ARGS list, in one process with umask 022, no background server and
    a fixed clock."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIND_")}
    env.update(PYTHONPATH=str(REPO), MIND_NO_SERVER="1", MIND_NOW="2026-05-01T09:00:00Z")

    def mind(*commands: list[str]) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-c", COMMANDS, json.dumps(commands)],
            env=env,
            capture_output=True,
            text=True,
            preexec_fn=_umask_022,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done

    return mind


def modes(folder: Path) -> dict[str, int]:
    """Every entry under `folder` (itself as ".") with its permission bits."""
    found = {".": stat.S_IMODE(folder.stat().st_mode)}
    for path in folder.rglob("*"):
        found[str(path.relative_to(folder))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def not_private(found: dict[str, int], folder: Path) -> dict[str, str]:
    return {
        name: f"{mode:o}"
        for name, mode in found.items()
        if mode != (0o700 if (folder / name).is_dir() else 0o600)
    }


def _fill(run: Run, home: Path, exports: Path) -> None:
    at = ["--home", str(home)]
    run(
        ["init", *at, "--name", "Echo"],
        ["turn", *at, "--model", "mock", "--mock-reply", "Noted.", "My PIN is 4417"],
        ["remember", *at, "The spare key is under the blue pot"],
        ["commit", *at, "Water the plants on Sunday"],
        ["project", *at],
        ["status", *at],
        ["verify", *at],
        ["recall", *at, "spare key"],
        ["log", *at],
        *(["export", *at, "--format", fmt, str(exports / fmt)] for fmt in ("jsonl", "md", "csv")),
    )


def test_every_file_a_home_holds_is_the_owners_only_under_umask_022(
    run: Run, tmp_path: Path
) -> None:
    home, exports = tmp_path / "mind", tmp_path / "exports"

    _fill(run, home, exports)

    found = modes(home)
    assert {"ledger.sqlite", "keys.sqlite", "readmodel.duckdb"} <= found.keys()
    assert "readmodel.published.duckdb" in found and "ledger-head.json" in found
    assert not_private(found, home) == {}
    for fmt, name in (("jsonl", "ledger.jsonl"), ("md", "transcript.md"), ("csv", "events.csv")):
        assert (exports / fmt / name).is_file()
        assert not_private(modes(exports / fmt), exports / fmt) == {}


def test_an_export_into_a_folder_that_exists_keeps_the_folders_mode_but_not_the_files(
    run: Run, tmp_path: Path
) -> None:
    home, shared = tmp_path / "mind", tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    (shared / "notes.txt").write_text("mine")  # an empty one becomes the export's: made 0700

    run(
        ["init", "--home", str(home)],
        ["export", "--home", str(home), "--format", "jsonl", str(shared)],
    )

    assert stat.S_IMODE(shared.stat().st_mode) == 0o755  # the user's folder, the user's choice
    assert stat.S_IMODE((shared / "ledger.jsonl").stat().st_mode) == 0o600


def _readable_by_nobody(paths: list[Path]) -> list[str]:
    """The paths a process running as `nobody` could open (none, when private)."""
    # The shell and cat, not this Python: the virtual environment may be out of nobody's reach.
    script = 'for f; do cat -- "$f" >/dev/null 2>&1 && printf "%s\\n" "$f"; done'

    def as_nobody() -> None:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    done = subprocess.run(
        ["/bin/sh", "-c", script, "sh", *map(str, paths)],
        capture_output=True,
        text=True,
        preexec_fn=as_nobody,
        cwd="/",
        env={"PATH": os.environ.get("PATH", "")},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run a process as another user")
def test_another_user_cannot_read_a_homes_files_even_when_its_folder_is_opened(
    run: Run,
) -> None:
    # A folder every user may pass through (pytest's own temporary root is 0700, which would
    # prove nothing), removed at the end.
    base = Path(tempfile.mkdtemp(prefix="mind-private-"))
    try:
        base.chmod(0o711)
        home = base / "mind"
        run(
            ["init", "--home", str(home)],
            ["turn", "--home", str(home), "--model", "mock", "--mock-reply", "Hi.", "hello"],
        )
        files = [p for p in home.rglob("*") if p.is_file()]
        assert len(files) >= 5

        control = base / "control.txt"  # a file anyone may read: the check can see one
        control.write_text("public\n")
        control.chmod(0o644)

        assert _readable_by_nobody([*files, control]) == [str(control)]  # the folder is 0700
        home.chmod(0o711)  # as if someone opened the folder: each file still refuses
        assert _readable_by_nobody([*files, control]) == [str(control)]
    finally:
        shutil.rmtree(base, ignore_errors=True)
