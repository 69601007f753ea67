"""The files by which a home's server makes itself known, and who is alive: one protocol for the
server that writes them, the client that finds it and the floor that must stop it (a forget).
Standard library only: the command line's fast path imports it before anything else."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

SOCKET_FILE = "server.sock"
TOKEN_FILE = "server-token"
INFO_FILE = "server.json"
STARTING_FILE = "server.starting"  # a client started a server lately: do not start another


def pid_alive(pid: int, others: bool = False) -> bool:
    """Whether `pid` is a live process of this user (one that has exited but is not yet
    reaped, a zombie, is not live). Another user's process is not ours to use, so it counts
    only with `others` (the server's own checks: not ours, but not gone either)."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        return others
    except OSError:  # ProcessLookupError
        return False
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: the signal check is all there is
    return stat_line.rpartition(")")[2].split()[:1] != ["Z"]


# `started` in server.json is written in whole seconds (truncated) after the process began; a
# process that began later than this after it cannot have written it (its pid was reused). The
# margin absorbs the rounding and a step of the wall clock (an NTP correction) since the start.
START_SLACK_S = 60.0


def process_start_time(pid: int) -> float | None:
    """When process `pid` began (Unix time, from /proc), or None when that cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        ticks = int(fields[19])  # field 22, starttime, in clock ticks since boot
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def is_server_process(info: Mapping[str, Any], alive: Callable[[int], bool] | None = None) -> bool:
    """Whether server.json's `pid` is the live process that wrote it: alive, of this user, and
    begun no later than the file's `started` (a pid reused by a later process is not; a file
    without a usable pid or `started` is stale)."""
    pid, started = info.get("pid"), info.get("started")
    if (
        not isinstance(pid, int)
        or isinstance(pid, bool)
        or pid <= 0
        or not isinstance(started, str)
    ):
        return False
    try:
        wrote = datetime.fromisoformat(started).timestamp()
    except (ValueError, OverflowError):
        return False
    if not (alive or pid_alive)(pid):
        return False
    began = process_start_time(pid)
    return began is None or began <= wrote + START_SLACK_S


def own_private(path: Path, kind: int) -> bool:
    """Whether `path` is of this `kind` (stat.S_IFSOCK, S_IFREG), ours, and private."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_IFMT(st.st_mode) == kind
        and st.st_uid == os.getuid()
        and not st.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


def read_info(home: Path) -> dict[str, Any] | None:
    """The home's server.json when a live server of this user wrote it, else None."""
    try:
        info = json.loads((home / INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict):
        return None
    if not is_server_process(info):
        return None
    return dict(info)


# The longest Unix socket path (sun_path holds 108 bytes with the terminating NUL).
UNIX_PATH_MAX = 107


def server_file(home: Path) -> Path:
    """Where a home's running server describes itself."""
    return home / INFO_FILE


def any_pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs, whoever's it is (a zombie does not)."""
    return pid_alive(pid, others=True)


def server_record(home: Path) -> tuple[dict[str, Any] | None, bool]:
    """The home's server.json when the process that wrote it still runs, and whether a stale
    one lies there instead (unreadable, keys missing, pid gone or reused by a later process)."""
    path = server_file(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, False
    except (OSError, ValueError):
        return None, path.is_file()
    if not isinstance(data, dict) or not is_server_process(data, alive=any_pid_alive):
        return None, True
    return data, False


def running_server(home: Path) -> dict[str, Any] | None:
    """The home's server.json when its process is alive (a stale file means no server)."""
    return server_record(home)[0]


def remove_stale_record(home: Path) -> None:
    """Remove a server.json no running server wrote (checked again just before)."""
    data, stale = server_record(home)
    if data is None and stale:
        with contextlib.suppress(OSError):
            server_file(home).unlink()


def write_atomically(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def remove_if_ours(path: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
