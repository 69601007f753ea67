"""A home copied while `mind serve` ran (`cp -a`) carries the original's server.json: the copy
is not served by that server, so its status calls the file stale, its stop never signals the
original's server (it says whose server the file names, exit 1), and a client of the copy never
calls it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from mindledger.server_files import read_info, server_record
from tests.service.serving import init_home, run_mind, start_server


def copy_live_home(home: Path, copy: Path) -> None:
    """`cp -a` of a home its server is using. cp copies everything it can and names each file
    it could not: a file the server removed meanwhile (a SQLite journal between transactions)
    is the only failure allowed, left out as a copy a moment later would leave it out."""
    done = subprocess.run(
        ["cp", "-a", str(home), str(copy)], capture_output=True, text=True, timeout=60
    )
    vanished = re.compile(r"^cp: cannot (?:stat|open) '([^']+)'.*No such file or directory$")
    for line in done.stderr.splitlines():
        match = vanished.match(line)
        assert match and not Path(match.group(1)).exists(), done.stderr
    assert done.returncode == 0 or done.stderr, done


def test_a_copied_home_s_stop_names_the_original_s_server_and_leaves_it_running(
    tmp_path: Path,
) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    server = start_server([home])
    try:
        copy = tmp_path / "copy"
        copy_live_home(home, copy)

        status = run_mind(copy, "server", "status", "--json")
        stopped = run_mind(copy, "server", "stop", "--timeout", "1", "--json")
        original = run_mind(home, "server", "status", "--json")

        assert status.returncode == 0 and status.stderr == ""
        assert json.loads(status.stdout) == {
            "running": False,
            "home": str(copy),
            "stale_file": True,
        }
        assert stopped.returncode == 1 and stopped.stdout == ""
        [line] = stopped.stderr.splitlines()
        assert line.startswith(
            f"Error: server.json names the server (pid {server.process.pid}) of another home "
            f"({home}): {copy} is a copy of it, so nothing was stopped"
        ), line
        assert "stale" not in line
        assert server.process.poll() is None  # the original's server still runs
        assert json.loads(original.stdout)["running"] is True
        assert json.loads(original.stdout)["pid"] == server.process.pid
        assert read_info(copy) is None and server_record(copy) == (None, False)
        assert read_info(home) is not None
    finally:
        server.process.terminate()
        server.process.wait(timeout=120)


def test_a_server_json_records_the_home_it_serves(tmp_path: Path) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    server = start_server([home])
    try:
        info = json.loads((home / "server.json").read_text())
        stat = home.stat()

        assert info["home_id"] == [stat.st_dev, stat.st_ino]
        assert info["homes"] == [str(home)]
    finally:
        server.process.terminate()
        server.process.wait(timeout=120)
