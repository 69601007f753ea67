"""A real `mind serve` process for tests, and a plain HTTP client (http.client) to talk to it."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.conftest import REPO, subprocess_env

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
START_TIMEOUT_S = 180  # a busy machine: the server imports the HTTP stack and opens each home


def run_mind(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`mind ARGS` as a process on `home`."""
    return subprocess.run(
        [*MIND, *args],
        env=subprocess_env(home, **env),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )


def init_home(path: Path, name: str, model: str | None = "mock") -> Path:
    """A new mind called `name` at `path`, set to `model` (None: the default, the embedded
    one). Made in-process: only the server under test needs a process of its own. The scripted
    mock by default: a server warms LiteLLM (seconds of CPU, holding the GIL while requests
    wait) for any other model, and these tests name the model of each turn they run."""
    from click.testing import CliRunner

    from mindledger.cli.main import mind

    env = {**subprocess_env(path), "MIND_NOW": None}
    commands = [["init", "--name", name], *([["model", "set", model]] if model else [])]
    for args in commands:
        done = CliRunner(env=env).invoke(mind, args, catch_exceptions=False)
        assert done.exit_code == 0, done.stderr
    return path


@dataclass
class Reply:
    """An HTTP answer: status, headers and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Server:
    """A running `mind serve`, started by `start_server`."""

    process: subprocess.Popen[str]
    ready: dict[str, Any]
    homes: list[Path]
    stderr: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return str(self.ready["url"])

    def token(self, home: Path | None = None) -> str:
        return ((home or self.homes[0]) / "server-token").read_text().strip()

    def connection(self, timeout: float = 120) -> http.client.HTTPConnection:
        parts = urlsplit(self.url)
        return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = "",
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """One request; `token` "" means the first home's token, None sends none."""
        return send(self.connection(), method, path, body, self._auth(token), raw, headers)

    def _auth(self, token: str | None) -> dict[str, str]:
        if token is None:
            return {}
        return {"Authorization": f"Bearer {token or self.token()}"}

    def vectors_caught_up(self, name: str = "Echo", token: str = "") -> dict[str, Any]:
        """Wait (bounded) until the mind's vector projection, a thread of the server that embeds
        stored items beside the turns, has reached the ledger's head; its status then. A read
        that shows the vectors' lag answers alike in two processes only after this."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            status = self.request("GET", f"/v1/minds/{name}/status", token=token).json()
            lag = {p["name"]: p["lag"] for p in status["projections"]}
            if lag.get("vectors", 0) == 0:
                return status  # caught up, or no vector projection (the model is off or absent)
            assert time.monotonic() < deadline, f"the vectors never caught up: {status}"
            time.sleep(0.05)  # a poll on the condition above, not a wait for time to pass

    def stop(self) -> int:
        """SIGTERM and wait; the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=120)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        if self.process.stdout:
            self.process.stdout.close()


def send(
    con: http.client.HTTPConnection,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
    extra: dict[str, str] | None = None,
) -> Reply:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    all_headers = {**(headers or {}), **(extra or {})}
    if data is not None:
        all_headers.setdefault("Content-Type", "application/json")
    try:
        con.request(method, path, body=data, headers=all_headers)
        response = con.getresponse()
        return Reply(response.status, dict(response.getheaders()), response.read())
    finally:
        con.close()


class UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket."""

    def __init__(self, path: Path, timeout: float = 120) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def start_server(homes: list[Path], *args: str, **env: str) -> Server:
    """`mind serve --port 0 --json` on these homes; returns once its ready line is read."""
    home_args = [a for h in homes for a in ("--home", str(h))]
    process = subprocess.Popen(
        [*MIND, "serve", *home_args, "--port", "0", "--json", *args],
        env=subprocess_env(homes[0], **env),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    errors: list[str] = []
    assert process.stderr is not None
    threading.Thread(target=lambda: errors.extend(process.stderr or []), daemon=True).start()
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(START_TIMEOUT_S)
    if not line or not line[0].strip():
        process.kill()
        process.wait(timeout=30)
        raise AssertionError(f"mind serve did not start: {''.join(errors)}")
    return Server(process, json.loads(line[0]), homes, errors)


def sse_events(response: http.client.HTTPResponse) -> Iterator[tuple[str, Any]]:
    """(event, data) pairs of a text/event-stream response, as they arrive."""
    event, data = "message", []
    for raw in response:
        line = raw.decode().rstrip("\n")
        if not line:
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def env_without_server() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "MIND_HOME"}
