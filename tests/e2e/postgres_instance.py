"""A private PostgreSQL server for one test (its own data folder and port), made with the
binaries scripts/postgres-test-server.sh installs, so that a test may stop and restart it
without touching the server every other test shares. As root, the server runs as the
`postgres` user (PostgreSQL refuses root) from a folder that user can reach."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian's layout), or None."""
    root = Path("/usr/lib/postgresql")
    found = sorted(root.glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Instance:
    """A running private server: its DSN, and a restart that drops every connection."""

    dsn: str
    pg_ctl: list[str]
    data: Path
    run_as: Callable[[], None] | None

    def ctl(self, *args: str) -> None:
        done = subprocess.run(
            [*self.pg_ctl, "-D", str(self.data), *args],
            preexec_fn=self.run_as,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr + done.stdout

    def restart(self) -> None:
        """Stop at once (every session is ended, as a crash or failover would), then start;
        returns once the server accepts connections again."""
        self.ctl("-m", "immediate", "-w", "restart")


@contextlib.contextmanager
def private_postgres() -> Iterator[Instance]:
    """initdb, start on a free loopback port, yield, stop, delete. Skips the test when
    PostgreSQL is not installed or cannot be run here."""
    bin_dir = binaries()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (scripts/postgres-test-server.sh installs it)")
    run_as: Callable[[], None] | None = None
    folder = Path(tempfile.mkdtemp(prefix="mind-pg-", dir="/tmp"))
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(folder)
            pytest.skip("running as root and there is no postgres user to run PostgreSQL")
        os.chown(folder, user.pw_uid, user.pw_gid)

        def run_as() -> None:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)

    data = folder / "data"
    port = free_port()
    initdb = subprocess.run(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", "mind", "--auth=trust", "-E", "UTF8"],
        preexec_fn=run_as,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if initdb.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"initdb failed here: {initdb.stderr.strip()[-300:]}")
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    instance = Instance(
        f"postgresql://mind@127.0.0.1:{port}/postgres",
        [str(bin_dir / "pg_ctl"), "-o", options, "-l", str(folder / "server.log")],
        data,
        run_as,
    )
    try:
        instance.ctl("-w", "start")
        yield instance
    finally:
        with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
            instance.ctl("-m", "immediate", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)
