"""A tiny client for the home's running `mind serve` (HTTP over `HOME/server.sock`), and the
rules for when the command line may use it. Standard library only: it runs before anything
heavy is imported (`cli.fast_path`).

A server takes a call only when its answer is the one this process would compute itself: the
server is ours (same user, same package version, alive, its socket ours and private) and was
started with the same settings (`env_fingerprint`: the MIND_* and provider variables and the
home's .env and config.json, compared as an HMAC keyed by the home's token, so server.json
reveals no secret). Anything else runs in-process, silently.
"""

from __future__ import annotations

# The C module under `socket`: the wrapper module builds its IntEnums at import, a tenth of what
# this client imports; a Unix stream socket needs none of it.
import _socket as socket
import contextlib
import json
import os
import signal
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mindledger.server_files import (
    INFO_FILE,
    SOCKET_FILE,
    START_GRACE_S,
    STARTING_FILE,
    TOKEN_FILE,
    UNIX_PATH_MAX,
    env_fingerprint,
    home_files,
    mark_starting,
    open_log,
    own_private,
    read_info,
)

IDLE_EXIT_MINUTES = 10
WARNINGS_HEADER = "mind-warnings"  # = service.endpoints.WARNINGS_HEADER, lower-cased (test)
CONNECT_TIMEOUT_S = 2.0


class ServerUnavailable(Exception):
    """Raised when no server took the request (none, not ours, refused it before accepting):
    the call runs in-process instead."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class ServerRefused(Exception):
    """Raised when the server refused a request for a reason running it here would meet too
    (a full disk: 507): its one line is printed as the in-process command prints it."""


class ServerLost(Exception):
    """Raised when the server failed after it had the whole request: the turn may or may not
    be recorded, so it is not run again."""


def no_server(environ: Mapping[str, str]) -> bool:
    """MIND_NO_SERVER set to anything but empty, 0, false or no."""
    return environ.get("MIND_NO_SERVER", "").strip().lower() not in ("", "0", "false", "no")


def retire_outdated_server(home: Path) -> bool:
    """Stop (SIGTERM) the home's background server when the home's .env or config.json changed
    after it started: it would never match a client again, and calls would run in-process
    until it idled out. Only a server started in the background (`idle_exit_s` > 0) whose
    server.json is this user's is stopped; one started by hand is left alone. Returns whether
    a stop was asked for."""
    info = read_info(home)
    if (
        info is None
        or not own_private(home / INFO_FILE, stat.S_IFREG)
        or not isinstance(info.get("idle_exit_s"), int | float)
        or info["idle_exit_s"] <= 0
        or "home_files" not in info
        or info["home_files"] == home_files(home)
    ):
        return False
    try:
        os.kill(int(info["pid"]), signal.SIGTERM)  # it finishes its turns, then exits
    except OSError:
        return False
    return True


def package_version() -> str:
    """This program's version, as the server writes it into server.json
    (`importlib.metadata.version`): read from the first `mindledger-*.dist-info` on the path
    as that function would find it, since importing importlib.metadata and its lookup cost
    the fast path a quarter of its time."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("mindledger-") and name.endswith(".dist-info"):
                version = _metadata_version(os.path.join(entry or ".", name, "METADATA"))
                if version is not None:
                    return version
    return _metadata_package_version()


def _metadata_version(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip()
                if not line.strip():
                    break  # the headers end at the first blank line
    except OSError:
        return None
    return None


def _metadata_package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mindledger")
    except PackageNotFoundError:
        return "unknown"


def exchange(socket_path: str, request: bytes) -> tuple[int, bytes]:
    """Send one HTTP/1.1 request (with `Connection: close`) over a Unix socket; the status and
    body of the answer. Written out rather than through http.client, whose import (the email
    package) costs as much as the rest of the fast path. ServerUnavailable when the request
    was not all sent (so the server cannot have acted on it), ServerLost after that."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.connect(socket_path)
            sock.settimeout(None)  # a turn waits for the model as long as it takes
            sock.sendall(request)
        except OSError as e:
            raise ServerUnavailable(f"cannot send to the server ({e})") from None
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except OSError as e:
            raise ServerLost(f"the server stopped answering ({e})") from None
    finally:
        sock.close()
    raw = b"".join(chunks)
    tell_warnings(_headers(raw.partition(b"\r\n\r\n")[0]))
    return parse_response(raw)


def parse_response(raw: bytes) -> tuple[int, bytes]:
    """Status and body of a whole HTTP/1.1 response (Content-Length or chunked)."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    parts = head.decode("latin-1").split("\r\n")[0].split(" ", 2)
    if not sep or len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ServerLost("the server's answer was cut off")
    headers = _headers(head)
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunk(body)
    elif headers.get("content-length", "").isdigit():
        if len(body) < int(headers["content-length"]):
            raise ServerLost("the server's answer was cut off")
        body = body[: int(headers["content-length"])]
    return int(parts[1]), body


def from_json(text: str | bytes) -> Any:
    """`json.loads`, with a document nested deeper than the parser can go (whatever answers on
    the socket may send one) refused as ValueError like any other that is not JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _headers(head: bytes) -> dict[str, str]:
    """The header fields of a response's head (its status line left out), by lower-case name."""
    headers = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return headers


_told: set[str] = set()


def tell_warnings(headers: Mapping[str, str]) -> None:
    """Print the warnings the server heard running this call (its `Mind-Warnings` header, a
    JSON list of lines) on standard error, as the in-process command would have printed
    them: each line once per process."""
    raw = headers.get(WARNINGS_HEADER)
    if not raw:
        return
    try:
        lines = from_json(raw)
    except ValueError:
        return  # not ours to print
    if not isinstance(lines, list):
        return
    from mindledger.safe_text import for_terminal

    for line in lines:
        if isinstance(line, str) and line not in _told:
            _told.add(line)
            print(for_terminal(line, keep=""), file=sys.stderr, flush=True)


def _unchunk(data: bytes) -> bytes:
    out: list[bytes] = []
    at = 0
    while True:
        end = data.find(b"\r\n", at)
        if end < 0:
            raise ServerLost("the server's answer was cut off")
        size = int(data[at:end].split(b";")[0] or b"0", 16)
        if size == 0:
            return b"".join(out)
        if end + 2 + size > len(data):
            raise ServerLost("the server's answer was cut off")
        out.append(data[end + 2 : end + 2 + size])
        at = end + 2 + size + 2


class Server:
    """A running server that may take this home's calls."""

    def __init__(self, home: Path, name: str, token: str, socket_path: Path) -> None:
        self.home, self.token, self.socket_path = home, token, socket_path
        self.name = name  # the mind's name in URLs

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One request; returns the JSON answer. ServerUnavailable when the server did not
        take it (nothing was done), ServerLost when it failed after it had the request."""
        payload = b"" if body is None else json.dumps(body).encode()
        head = [
            f"{method} {path} HTTP/1.1",
            "Host: localhost",
            f"Authorization: Bearer {self.token}",
            "Accept: application/json",
            "Connection: close",
            f"Content-Length: {len(payload)}",
        ]
        if body is not None:
            head.append("Content-Type: application/json")
        request = ("\r\n".join(head) + "\r\n\r\n").encode() + payload
        return _answer(*exchange(str(self.socket_path), request))

    def mind_path(self, tail: str) -> str:
        return f"/v1/minds/{quote(self.name, safe='')}/{tail}"

    def call_mind(self, method: str, tail: str, body: dict[str, Any] | None = None) -> Any:
        """`call` on this mind's path; when the server no longer knows the mind by the name
        server.json gave (a turn renamed it), once more under the name it gives now (a
        home's token opens that mind only, so /v1/minds lists just it)."""
        try:
            return self.call(method, self.mind_path(tail), body)
        except ServerUnavailable as e:
            if e.code != "unknown_mind":
                raise
        minds = self.call("GET", "/v1/minds")
        if not (isinstance(minds, list) and len(minds) == 1 and "name" in minds[0]):
            raise ServerUnavailable("the server does not say which mind this home is")
        self.name = str(minds[0]["name"])
        return self.call(method, self.mind_path(tail), body)


def _answer(status: int, raw: bytes) -> Any:
    """The JSON of a response; errors mapped onto what the client may do next."""
    try:
        data = from_json(raw)
    except ValueError:
        data = None
    if 200 <= status < 300 and data is not None:
        return data
    if isinstance(data, dict) and isinstance(data.get("mind_turn"), dict):
        return data["mind_turn"]  # a turn recorded as failed: printed as `mind turn` does
    if isinstance(data, dict) and "turn" in data and "status" in data:
        data.pop("error", None)  # the same from a server before the one error shape
        return data
    error = data.get("error") if isinstance(data, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if status == 507 and isinstance(message, str) and message:
        raise ServerRefused(message)  # no room to write: the same here, and nothing recorded
    if code == "server_stopping":  # it stopped mid-request: a turn may be recorded (interrupted)
        raise ServerLost(f"the server stopped before answering ({status} {code})")
    if status == 503 or 400 <= status < 500:
        # Refused before anything was recorded (bad input, stopping, unknown mind): running
        # in-process gives the same answer, or the same error in the same words.
        refused = f"the server refused the request ({status} {code}: {message})"
        raise ServerUnavailable(refused, code)
    raise ServerLost(f"the server failed ({status} {code or ''}: {message or raw[:200]!r})")


def find_server(home: Path, environ: Mapping[str, str]) -> Server | None:
    """The server that may take this home's calls, if one runs (see the module's rules)."""
    info = read_info(home)
    if info is None:
        return None
    socket_path = home / SOCKET_FILE
    token_path = home / TOKEN_FILE
    if not (own_private(socket_path, stat.S_IFSOCK) and own_private(token_path, stat.S_IFREG)):
        return None
    if info.get("version") != package_version():
        return None
    try:
        token = token_path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not token or info.get("env_fingerprint") != env_fingerprint(environ, home, token):
        return None
    name = _mind_name(info, home)
    return None if name is None else Server(home, name, token, socket_path)


def _mind_name(info: Mapping[str, Any], home: Path) -> str | None:
    """The name under which the server serves `home` (server.json's `homes` and `minds`, in
    the same order)."""
    homes, names = info.get("homes"), info.get("minds")
    if not (isinstance(homes, list) and isinstance(names, list) and len(homes) == len(names)):
        return None
    for path, name in zip(homes, names, strict=True):
        if _same_path(path, home) and isinstance(name, str):
            return name
    return None


def _same_path(value: Any, home: Path) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return os.path.samefile(value, home)
    except OSError:
        return False


def may_start_server(home: Path) -> bool:
    """Whether a client may start a server for `home`: an initialised mind in a folder of this
    user that it can write, with no server running or lately started."""
    try:
        st = os.stat(home)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return False
    if not os.access(home, os.W_OK | os.X_OK) or not _is_mind(home):
        return False
    if len(os.fsencode(home / SOCKET_FILE)) > UNIX_PATH_MAX:
        return False  # no socket could be made there: a server would serve no call of ours
    if retire_outdated_server(home):
        return False  # the next call, once it has gone, starts a fresh one
    if (home / INFO_FILE).exists() and read_info(home) is not None:
        return False  # one runs (another user's, version or settings): leave it be
    with contextlib.suppress(OSError):
        return time.time() - os.stat(home / STARTING_FILE).st_mtime > START_GRACE_S
    return True


def _is_mind(home: Path) -> bool:
    """A SQLite ledger, or a config.json (a PostgreSQL mind keeps only that here)."""
    return (home / "ledger.sqlite").is_file() or (home / "config.json").is_file()


def start_server(home: Path, environ: Mapping[str, str]) -> bool:
    """Start `mind serve --home HOME --idle-exit 10` detached (its own session, output to the
    home's log), for the calls after this one; returns whether one was started."""
    if not may_start_server(home):
        return False
    try:
        mark_starting(home)
        log = open_log(home / "logs" / "server.log")  # handed to the child
    except OSError:
        return False
    import subprocess

    command = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
    command += ["serve", "--home", str(home), "--port", "0", "--idle-exit", str(IDLE_EXIT_MINUTES)]
    env = {k: v for k, v in environ.items() if k != "MIND_NO_SERVER"}
    try:
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,  # not a child that dies with the terminal
            close_fds=True,
        )
    except OSError:
        return False
    finally:
        log.close()
    with contextlib.suppress(OSError):
        mark_starting(home, child.pid)  # `mind server stop` can find it before server.json
    return True


# -- streamed turns (`mind chat`) ------------------------------------------------------------


def stream_mind(server: Server, tail: str, body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """POST `body` to this mind's `tail` and return its server-sent events as (event, data),
    the data parsed from JSON. ServerUnavailable (raised here, before any event) when the server
    did not take the request (retried once under the mind's new name, as `call_mind`);
    ServerLost from the iterator when the stream breaks after that."""
    try:
        return _open_stream(server, server.mind_path(tail), body)
    except ServerUnavailable as e:
        if e.code != "unknown_mind":
            raise
    minds = server.call("GET", "/v1/minds")
    if not (isinstance(minds, list) and len(minds) == 1 and "name" in minds[0]):
        raise ServerUnavailable("the server does not say which mind this home is")
    server.name = str(minds[0]["name"])
    return _open_stream(server, server.mind_path(tail), body)


class _Reader:
    """Buffered reads from a socket; a broken or closed connection is ServerLost."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buf = sock, b""

    def more(self) -> bytes:
        try:
            chunk = self.sock.recv(65536)
        except OSError as e:
            raise ServerLost(f"the server stopped answering ({e})") from None
        self.buf += chunk
        return chunk

    def until(self, sep: bytes) -> bytes:
        while (at := self.buf.find(sep)) < 0:
            if not self.more():
                raise ServerLost("the server's answer was cut off")
        out, self.buf = self.buf[:at], self.buf[at + len(sep) :]
        return out

    def exactly(self, size: int) -> bytes:
        while len(self.buf) < size:
            if not self.more():
                raise ServerLost("the server's answer was cut off")
        out, self.buf = self.buf[:size], self.buf[size:]
        return out

    def rest(self) -> bytes:
        while self.more():
            pass
        out, self.buf = self.buf, b""
        return out


def _open_stream(server: Server, path: str, body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    payload = json.dumps(body).encode()
    head = [
        f"POST {path} HTTP/1.1",
        "Host: localhost",
        f"Authorization: Bearer {server.token}",
        "Accept: text/event-stream",
        "Connection: close",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
    ]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.connect(str(server.socket_path))
            sock.settimeout(None)  # a turn waits for the model as long as it takes
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        except OSError as e:
            raise ServerUnavailable(f"cannot send to the server ({e})") from None
        reader = _Reader(sock)
        top = reader.until(b"\r\n\r\n")
        tell_warnings(_headers(top))
        headers = top.decode("latin-1").lower()
        if not top.startswith(b"HTTP/1.1 200 ") or "content-type: text/event-stream" not in headers:
            status, raw = parse_response(top + b"\r\n\r\n" + reader.rest())
            _answer(status, raw)  # raises for an error; a 2xx that is no stream is lost below
            raise ServerLost("the server's answer is not a stream of events")
    except BaseException:
        sock.close()
        raise
    return _events(sock, reader, "transfer-encoding: chunked" in headers)


def _events(sock: socket.socket, reader: _Reader, chunked: bool) -> Iterator[tuple[str, Any]]:
    """The events of an open `text/event-stream` body, as they arrive."""
    pending = b""
    try:
        while True:
            if chunked:
                try:
                    size = int(reader.until(b"\r\n").split(b";")[0] or b"0", 16)
                except ValueError:
                    raise ServerLost("the server's answer is garbled") from None
                if size == 0:
                    return
                data = reader.exactly(size)
                reader.until(b"\r\n")
            else:
                if not reader.buf and not reader.more():  # the body ends with the connection
                    return
                data, reader.buf = reader.buf, b""
            pending += data
            while (at := pending.find(b"\n\n")) >= 0:
                block, pending = pending[:at], pending[at + 2 :]
                event = _sse_event(block.decode("utf-8", "replace"))
                if event is not None:
                    yield event
    finally:
        sock.close()


def _sse_event(block: str) -> tuple[str, Any] | None:
    """(event, JSON data) of one server-sent event; None for a comment or keep-alive."""
    kind, data = "message", []
    for line in block.splitlines():
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            kind = value
        elif name == "data":
            data.append(value)
    if not data:
        return None
    try:
        return kind, from_json("\n".join(data))
    except ValueError:
        raise ServerLost("the server sent an event that is not JSON") from None
