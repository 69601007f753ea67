"""A home this process cannot write: reads work (catching up in a temporary copy), writes are
one `Error:` line, and nothing in the home changes.

Root ignores permission bits, so as root the `mind` processes run through `setpriv` without
CAP_DAC_OVERRIDE (still uid 0, now bound by the files' modes like any user); as another user
the modes alone make the home read-only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import subprocess_env

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
WITHOUT_OVERRIDE = ["--bounding-set=-dac_override,-dac_read_search"]
Run = Callable[..., subprocess.CompletedProcess[str]]


def _unprivileged_prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is not installed: root would write anyway")
    prefix = [setpriv, *WITHOUT_OVERRIDE, "--inh-caps=-dac_override,-dac_read_search"]
    if subprocess.run([*prefix, "true"], check=False).returncode != 0:
        pytest.skip("cannot drop CAP_DAC_OVERRIDE here: root would write anyway")
    return prefix


def _mind(home: Path, prefix: list[str]) -> Run:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, *MIND, *args],
            env=subprocess_env(home, LITELLM_OFFLINE_MODE="true"),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


def _snapshot(home: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(home.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def read_only_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Run]]:
    """A mind with one projected and one not yet projected commitment, made read-only (shared
    by this module's tests: each asserts that it changed nothing)."""
    from click.testing import CliRunner

    from mindledger.cli.main import mind

    home = tmp_path_factory.mktemp("read-only") / "mind"
    # Made in-process, in the environment the processes get: the reads under test are those.
    writer = CliRunner(env={**subprocess_env(home, LITELLM_OFFLINE_MODE="true"), "MIND_NOW": None})
    for args in (
        ["init", "--name", "Echo"],
        ["commit", "Send the weekly report"],
        ["commitments"],  # the read model now includes position 2
        ["commit", "Water the ficus"],  # not projected yet
    ):
        assert writer.invoke(mind, args, catch_exceptions=False).exit_code == 0
    prefix = _unprivileged_prefix()
    for path in [home, *home.iterdir()]:
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        yield home, _mind(home, prefix)
    finally:
        for path in [home, *home.iterdir()]:
            path.chmod(path.stat().st_mode | 0o200)


def test_reads_from_a_read_only_home_see_every_event_and_change_nothing(
    read_only_home: tuple[Path, Run],
) -> None:
    home, mind = read_only_home
    before = _snapshot(home)

    listed = mind("commitments", "--json")
    queried = mind("query", "SELECT text FROM commitments ORDER BY text")
    recalled = mind("recall", "ficus", "--json")
    status = mind("status", "--json")
    verified = mind("verify")

    assert listed.returncode == 0, listed.stderr
    texts = sorted(c["text"] for c in json.loads(listed.stdout))
    assert texts == ["Send the weekly report", "Water the ficus"]
    assert queried.returncode == 0, queried.stderr
    assert json.loads(queried.stdout) == [
        {"text": "Send the weekly report"},
        {"text": "Water the ficus"},
    ]
    assert recalled.returncode == 0, recalled.stderr
    assert any("Water the ficus" in i["text"] for i in json.loads(recalled.stdout)["items"])
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["head"]["position"] == 3
    assert verified.returncode == 0 and verified.stdout.startswith("OK: 3 events")
    assert _snapshot(home) == before


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["commit", "Call the bank"], "cannot write the ledger"),
        (["turn", "hello", "--model", "mock", "--mock-reply", "Hi."], "cannot write the ledger"),
        (["project"], "cannot build the read model"),
    ],
)
def test_writes_to_a_read_only_home_are_one_error_line_and_change_nothing(
    read_only_home: tuple[Path, Run], args: list[str], says: str
) -> None:
    home, mind = read_only_home
    before = _snapshot(home)

    result = mind(*args)

    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and says in lines[0], result.stderr
    assert _snapshot(home) == before


def test_the_projector_lock_is_taken_through_a_read_only_handle_when_writing_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.projections.engine import readmodel

    lock = tmp_path / "projector.lock"
    lock.touch()
    real_open = os.open
    modes: list[int] = []

    def refuse_writing(path: str, flags: int, mode: int = 0o777) -> int:
        modes.append(flags & os.O_ACCMODE)
        if flags & os.O_ACCMODE != os.O_RDONLY:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, mode)

    monkeypatch.setattr(readmodel.os, "open", refuse_writing)

    with (
        readmodel.projector_lock(lock, wait=False) as held,
        readmodel.projector_lock(lock, wait=False) as second,
    ):
        assert (held, second) == (True, False)

    assert modes == [os.O_RDWR, os.O_RDONLY, os.O_RDWR, os.O_RDONLY]
