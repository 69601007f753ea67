"""Running the server: uvicorn on a TCP port and on each home's Unix socket, `server.json`
when ready, a rotating log per home, idle exit, and a clean stop on SIGTERM.

A stop lets running requests and turns finish for `GRACE_S`; a turn still waiting on its
model then is recorded interrupted by this process (`MindLedger.interrupt_own_turns`) and the
process exits without waiting for the model, so a stop takes under 2 s and no turn is left
`started` (a process killed outright leaves it to the next turn's unfinished-turn recovery).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import logging.handlers
import math
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mindledger.domain.errors import MindError
from mindledger.domain.redaction import redact
from mindledger.server_files import (
    SOCKET_FILE,
    UNIX_PATH_MAX,
    env_fingerprint,
    home_files,
    home_identity,
    private_folder,
    private_opener,
    remove_if_ours,
    running_server,
    server_file,
    startup_environment,
    write_atomically,
)
from mindledger.service.endpoints import DEFAULT_MAX_BODY
from mindledger.service.minds import Minds

LOG_FILE = Path("logs") / "server.log"
LOG_BYTES, LOG_BACKUPS = 1024 * 1024, 3
# How long a stop waits for running requests and turns, counted from the signal: a model may
# take a minute to answer, and a supervisor (systemd, Docker, a test) expects a stopped server
# gone in seconds; what is still running then is recorded interrupted.
GRACE_S = 0.5
STOPPED_REASON = "the server stopped before this turn's model answered"


class ServerRunningError(MindError):
    """Raised when a home is already served by a running server."""


class RemoteBindError(MindError):
    """Raised when asked to listen beyond this machine without --allow-remote."""


@dataclass(frozen=True)
class ServeOptions:
    """How to serve: TCP host and port (0: any free one), idle exit (0: never), body limit."""

    host: str = "127.0.0.1"
    port: int = 0
    idle_exit_s: float = 0.0
    allow_remote: bool = False
    max_body: int = DEFAULT_MAX_BODY
    grace_s: float = GRACE_S
    cors: tuple[str, ...] = ()  # origins browsers may call from (service/cors.py)


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(options: ServeOptions) -> None:
    """Refuse a non-loopback bind unless --allow-remote (tokens are required either way)."""
    if not is_loopback(options.host) and not options.allow_remote:
        raise RemoteBindError(
            f"--host {options.host} is reachable from other machines; add --allow-remote to "
            "serve there (every request still needs a mind's token; put TLS in front)"
        )


def one_line(text: str) -> str:
    """`text` with every unprintable character (newlines, escape sequences, NUL, direction
    overrides) written as a Python escape, so one record stays one honest line."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


class ServerLogs:
    """One rotating log per home: request lines of a mind go to its home's log, the server's
    own lines (start, stop, errors) to every home's. Secrets are redacted on the way out."""

    def __init__(self, minds: Minds) -> None:
        self.secrets = [m.token for m in minds] + [s for m in minds for s in m.secrets]
        self.by_name: dict[str, logging.Logger] = {}
        self.server = logging.getLogger("mindledger.server")
        self.server.setLevel(logging.INFO)
        self.server.propagate = False
        self._handlers: list[logging.Handler] = []
        for index, mind in enumerate(minds):
            path = mind.home.path / LOG_FILE
            private_folder(path.parent)
            handler = _PrivateLog(
                path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
            )
            handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
            handler.addFilter(self._redacting)
            self._handlers.append(handler)
            self.server.addHandler(handler)
            access = logging.getLogger(f"mindledger.server.access.{index}")
            access.setLevel(logging.INFO)
            access.propagate = False
            access.addHandler(handler)
            self.by_name[mind.name] = access

    def _redacting(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = one_line(redact(record.getMessage(), self.secrets)), None
        return True

    def request(self, method: str, path: str, status: int, ms: float, mind: str | None) -> None:
        """One line per request: method, path, status, milliseconds (no body, no query)."""
        logger = self.by_name.get(mind or "", self.server)
        logger.info("%s %s %d %.1fms", method, path, status, ms)

    def close(self) -> None:
        """Flush and release the files."""
        for handler in self._handlers:
            self.server.removeHandler(handler)
            handler.close()


class _PrivateLog(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file, the first and each after a rotation, is 0600."""

    def _open(self) -> Any:
        return open(
            self.baseFilename,
            self.mode,
            encoding=self.encoding,
            errors=self.errors,
            opener=private_opener,
        )


def _tcp_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    try:
        sock = socket.create_server((host.strip("[]"), port), family=family, backlog=128)
    except OSError as e:
        raise MindError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    sock.set_inheritable(False)
    return sock


def _unix_socket(path: Path, log: logging.Logger) -> socket.socket | None:
    if len(os.fsencode(path)) > UNIX_PATH_MAX:
        log.warning("no Unix socket: %s is longer than a socket path may be", path)
        return None
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket (a live server was refused before this)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: only the owner may connect
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


def serve(
    minds: Minds,
    options: ServeOptions,
    announce: Callable[[dict[str, Any]], None],
) -> bool:
    """Serve until SIGTERM/SIGINT or idle exit; `announce` gets the ready description once.
    Returns whether every running turn finished before exit."""
    import uvicorn

    from mindledger.memory_release import cap_arenas
    from mindledger.service.app import ServerState, build_app

    cap_arenas()  # before the request threads: each would keep an arena of freed pages
    check_bind(options)
    for mind in minds:
        other = running_server(mind.home.path)
        if other is not None and other.get("pid") != os.getpid():
            raise ServerRunningError(
                f"a server (pid {other['pid']}, {other.get('url')}) already serves "
                f"{mind.home.path}; stop it with `mind server stop --home {mind.home.path}`"
            )
    logs = ServerLogs(minds)
    state = ServerState(on_request=logs.request)
    app = build_app(minds, max_body=options.max_body, state=state, cors=options.cors)
    tcp = _tcp_socket(options.host, options.port)
    port = tcp.getsockname()[1]
    shown_host = f"[{options.host}]" if ":" in options.host else options.host
    url = f"http://{shown_host}:{port}"
    # By home, not by name: a mind renamed while served keeps its socket (and its clean-up).
    unix = {m.home.path: _unix_socket(m.home.path / SOCKET_FILE, logs.server) for m in minds}
    sockets = [tcp] + [s for s in unix.values() if s is not None]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=max(1, math.ceil(options.grace_s)),  # uvicorn's: whole seconds
        ws="none",
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if not state.stopping.is_set():  # requests and turns wait from the first signal
                state.stop_deadline = time.monotonic() + options.grace_s
            state.stopping.set()  # event streams end, so the graceful wait can finish
            super().handle_exit(sig, frame)

    server = Server(config)
    minds_list = list(minds)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    written: list[Path] = []

    def describe(socket_path: str | None) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "pid": os.getpid(),
            "started": started,
            "version": version("mindledger"),
            "url": url,
            "socket": socket_path,
            "homes": [str(m.home.path) for m in minds],
            "minds": minds.names(),
            "idle_exit_s": options.idle_exit_s,
        }

    async def when_ready() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.02)
        for mind in minds:
            path = mind.home.path / SOCKET_FILE
            fp = env_fingerprint(startup_environment(), mind.home.path, mind.token)
            # Each home's file names that home and its mind only: a home's owner learns
            # nothing of the other homes this process serves.
            described = describe(str(path) if unix[mind.home.path] else None)
            described.update(
                homes=[str(mind.home.path)],
                minds=[mind.name],
                env_fingerprint=fp,
                home_files=home_files(mind.home.path),
                home_id=home_identity(mind.home.path),  # a copy of the home is not served
            )
            write_atomically(server_file(mind.home.path), described)
            written.append(server_file(mind.home.path))
        logs.server.info("serving %s at %s (pid %d)", ", ".join(minds.names()), url, os.getpid())
        # The models are read here, not in the thread: a daemon thread still inside DuckDB
        # when an idle server exits aborts the process (C++ meets the thread's forced exit).
        models = [mind.identity().model or "" for mind in minds_list]
        threading.Thread(
            target=_import_litellm, args=(models,), name="import-litellm", daemon=True
        ).start()
        announce(
            {
                **describe(
                    str(minds_list[0].home.path / SOCKET_FILE)
                    if unix[minds_list[0].home.path]
                    else None
                ),
                "sockets": {
                    m.name: str(m.home.path / SOCKET_FILE) if unix[m.home.path] else None
                    for m in minds
                },
            }
        )
        if options.idle_exit_s > 0:
            await _idle_watch(server, state, options.idle_exit_s, logs.server)

    async def main() -> None:
        watcher = asyncio.ensure_future(when_ready())
        try:
            await server.serve(sockets=sockets)
        finally:
            watcher.cancel()

    for mind in minds:
        mind.warm()
    # Each mind's vector projection, beside its turns (never in them): stopped and joined
    # before the minds close (a thread left inside DuckDB at exit aborts the process).
    vectors = [mind.follow_vectors() for mind in minds]
    # uvicorn re-raises the stop signal after its graceful stop; these handlers take it, so
    # the process cleans up and exits 0 instead of dying of it.
    previous = {sig: signal.signal(sig, _noted) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        asyncio.run(main())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        state.stopping.set()
        for follower in vectors:
            follower.stop()
        deadline = min(state.stop_deadline, time.monotonic() + options.grace_s)
        finished = minds.close(max(0.0, deadline - time.monotonic()))
        if not finished:
            marked = minds.interrupt_running(STOPPED_REASON)
            running = "stopped with a turn still running: %d recorded interrupted"
            logs.server.warning(running, len(marked))
        # The sockets first: once server.json is gone a fresh server may start and bind its own.
        for mind in minds:
            if unix[mind.home.path] is not None:
                with contextlib.suppress(OSError):
                    (mind.home.path / SOCKET_FILE).unlink()
        for path in written:
            remove_if_ours(path)
        logs.server.info("stopped (pid %d)", os.getpid())
        logs.close()
    return finished


def _noted(sig: int, frame: Any) -> None:
    """A stop signal after uvicorn's own handling: nothing more to do."""


def _import_litellm(models: list[str]) -> None:
    """Import LiteLLM once, in the background, so the first turn does not pay for it (not when
    every served mind's model is the scripted mock)."""
    from mindledger.warmup import warm_model_client

    # A thread's boundary: a failed warm-up only means the first turn imports it itself.
    with contextlib.suppress(Exception):
        warm_model_client(models)


async def _idle_watch(server: Any, state: Any, idle_s: float, log: logging.Logger) -> None:
    while not server.should_exit:
        await asyncio.sleep(min(5.0, max(idle_s / 10, 0.05)))
        quiet = time.monotonic() - state.last_activity
        if state.in_flight == 0 and quiet >= idle_s:
            log.info("no request for %.0f s: exiting", quiet)
            server.should_exit = True
