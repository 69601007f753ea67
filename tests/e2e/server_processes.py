"""Real `mind serve` processes and `mind` client processes for the fast-path and load tests:
free ports, temp homes, and a stop (SIGTERM, then SIGKILL) that the fixtures always run."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

REPO = Path(__file__).resolve().parents[2]
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
NOW = "2026-05-01T09:00:00Z"
READY_S = 180.0  # a busy 2-core machine has taken a minute to import the server


def client_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a `mind` process that may use (or start) the home's server."""
    env = {k: v for k, v in os.environ.items() if k != "MIND_NO_SERVER"}
    env.update(MIND_HOME=str(home), PYTHONPATH=str(REPO), MIND_NOW=NOW)
    env["LITELLM_OFFLINE_MODE"] = "true"
    env.update(extra)
    return env


@dataclass(frozen=True)
class Ran:
    """What a `mind` process did."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_mind(args: Sequence[str], env: dict[str, str], stdin: str | None = None) -> Ran:
    done = subprocess.run(
        [*MIND, *args], env=env, input=stdin, capture_output=True, text=True, timeout=300
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def server_info(home: Path) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads((home / "server.json").read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError):
        return None


def wait_for(condition: Callable[[], Any], what: str, timeout: float = READY_S) -> Any:
    """Poll `condition` until it returns something true (a process's state, not a time)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def stop_pid(pid: int) -> None:
    """SIGTERM a server, SIGKILL it if it is still there after 30 s."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG) != (0, 0):
                    return
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)


@dataclass
class Served:
    """A running `mind serve` and what its server.json says."""

    proc: subprocess.Popen[bytes]
    info: dict[str, Any]
    homes: list[Path]

    def token(self, home: Path) -> str:
        return (home / "server-token").read_text(encoding="utf-8").strip()

    def http(
        self, method: str, path: str, home: Path, body: dict[str, Any] | None = None
    ) -> tuple[int, Any]:
        """One request over TCP with `home`'s token."""
        url = urlsplit(self.info["url"])
        conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=300)
        headers = {"Authorization": f"Bearer {self.token(home)}"}
        payload = None if body is None else json.dumps(body).encode()
        if payload is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            return response.status, json.loads(response.read())
        finally:
            conn.close()

    def mind_path(self, home: Path, tail: str) -> str:
        # Each home's server.json names only that home's mind.
        info = server_info(home)
        assert info is not None, f"no server.json in {home}"
        name = info["minds"][0]
        return f"/v1/minds/{quote(name, safe='')}/{tail}"


@contextlib.contextmanager
def serving(homes: Sequence[Path], env: dict[str, str]) -> Iterator[Served]:
    """`mind serve --port 0 --home H...` until the block ends (then stopped, always)."""
    args = [*MIND, "serve", "--port", "0"]
    for home in homes:
        args += ["--home", str(home)]
    log = open(homes[0].parent / f"serve-{homes[0].name}.out", "ab")  # noqa: SIM115
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=log, start_new_session=True)
    log.close()
    try:

        def ready() -> dict[str, Any] | None:
            assert proc.poll() is None, f"mind serve exited with {proc.returncode}"
            infos = [server_info(h) for h in homes]
            ok = all(i is not None and i.get("pid") == proc.pid for i in infos)
            return infos[0] if ok else None

        info = wait_for(ready, "mind serve to write server.json")
        yield Served(proc, info, list(homes))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def logged_requests(home: Path, marker: str) -> int:
    """Lines of the home's server log that record a request containing `marker`."""
    total = 0
    for path in (home / "logs").glob("server.log*"):
        with open(path, encoding="utf-8", errors="replace") as f:
            total += sum(1 for line in f if marker in line)
    return total


def run_in_process(args: Sequence[str], env: dict[str, str]) -> Ran:
    """`mind ARGS...` in this process with `env` (click's runner): for the set-up and read-back
    around the processes under test, where a process of its own would only pay the start-up."""
    from click.testing import CliRunner

    from mindledger.cli.main import mind

    done = CliRunner(env=env).invoke(mind, list(args), catch_exceptions=False)
    return Ran(done.exit_code, done.stdout, done.stderr)


def init_mind(home: Path, name: str = "Echo", *extra: str, model: str | None = "mock") -> None:
    """`mind init` in-process (no server), then the mind set to `model` (None: the default, the
    embedded one). The scripted mock by default: a server warms LiteLLM (seconds of CPU,
    holding the GIL while requests wait) for any other model, and these tests name the model
    of each turn they run."""
    env = client_env(home, MIND_NO_SERVER="1")
    done = run_in_process(["init", "--name", name, *extra], env)
    assert done.code == 0, done.err
    if model is not None:
        done = run_in_process(["model", "set", model], env)
        assert done.code == 0, done.err


def ledger_turns(home: Path) -> tuple[list[tuple[int, str]], int]:
    """(seq, text) of every turn the ledger started, and how many completed (read in-process)."""
    done = run_in_process(
        ["log", "--json", "--limit", "100000"], client_env(home, MIND_NO_SERVER="1")
    )
    assert done.code == 0, done.err
    events = done.json()
    started = [
        (e["payload"]["seq"], e["payload"]["text"])
        for e in events
        if e["type"] == "mind.turn.started"
    ]
    completed = sum(1 for e in events if e["type"] == "mind.turn.completed")
    return started, completed


def verified(home: Path) -> bool:
    done = run_mind(["verify", "--json"], client_env(home, MIND_NO_SERVER="1"))
    return done.code == 0 and done.json()["ok"] is True


def cids_named(text: str) -> str:
    """`text` with every CID written `c<cid>`: each mind keys its CIDs with its own secret, so
    twin homes name the same promise by different CIDs."""
    return re.sub(r"\bc[0-9a-f]{10}\b", "c<cid>", text)
