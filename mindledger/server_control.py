"""Stopping a home's server (`mind server stop`): one use case, whichever front-end asks.

A server that a client started a moment ago has not yet written server.json; stopping then
waits for it (the client noted its pid in server.starting), so a stop right after the turn that
started it is never missed and the server does not idle on for minutes."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from mindledger.domain.errors import MindError
from mindledger.results_files import ServerStopped
from mindledger.server_files import (
    any_pid_alive,
    copied_from_served_home,
    remove_stale_record,
    server_record,
    serves_this_home,
    starting_server_pid,
)

POLL_S = 0.05


def stop_server(home: Path, timeout: float) -> ServerStopped:
    """SIGTERM the server serving `home` (it finishes running turns, then exits) and wait up
    to `timeout` seconds for it to exit. MindError when server.json names another home's
    server (this home is a copy), a process that does not answer for this home, another user's
    process, or when it did not exit in time."""
    deadline = time.monotonic() + timeout
    data, stale = server_record(home)
    starting = starting_server_pid(home) if data is None else None
    while data is None and starting is not None and time.monotonic() < deadline:
        time.sleep(POLL_S)  # a server just started: it writes server.json once it listens
        data, stale = server_record(home)
        if data is None and not any_pid_alive(starting):
            starting = None
    _refuse_a_copied_record(home, data)
    if data is None and starting is not None:
        pid = starting  # started by a client, not yet listening: stopped before it serves
    elif data is None:
        if stale:
            remove_stale_record(home)  # its pid is not this home's server: never signal it
        removed = {"stale_file_removed": True} if stale else {}
        return ServerStopped.model_validate({"stopped": False, "running": False} | removed)
    else:
        pid = int(data["pid"])
        if not serves_this_home(home, data):
            raise MindError(
                f"server.json names a server (pid {pid}) that does not serve {home} (it does "
                "not answer on this home's socket with this home's token), so nothing was "
                "stopped; `mind server status` shows the file as stale"
            )
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise MindError(f"not allowed to stop the server (pid {pid}): another user's") from None
    deadline = max(deadline, time.monotonic() + POLL_S)
    while any_pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    if any_pid_alive(pid):
        raise MindError(f"the server (pid {pid}) did not exit within {timeout:g} s")
    return ServerStopped.model_validate({"stopped": True, "pid": pid})


def _refuse_a_copied_record(home: Path, data: object) -> None:
    """MindError when `home` holds a copy of another home's server.json whose server runs:
    never signalled; the file describes nothing here, so it goes as a stale one would."""
    original = copied_from_served_home(home) if data is None else None
    if original is None:
        return
    remove_stale_record(home)
    homes = original.get("homes")
    served = ", ".join(h for h in homes if isinstance(h, str)) if isinstance(homes, list) else ""
    raise MindError(
        f"server.json names the server (pid {original.get('pid')}) of another home "
        f"({served or 'not this one'}): {home} is a copy of it, so nothing was "
        "stopped (the copied server.json was removed); stop that server from its own home"
    )
