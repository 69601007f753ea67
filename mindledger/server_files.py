"""The files by which a home's server makes itself known (server.json, its token, the
fingerprint of its settings), and who is alive: one protocol for the server that writes them,
the client that finds it and the floor that must stop it (a forget). The standard library and
the domain's errors only: the command line's fast path imports it before anything else."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from mindledger.domain.errors import MindError

# Re-exported for the server's log (a front-end reaches the rule through the floor).
from mindledger.domain.private_files import private_folder as private_folder
from mindledger.domain.private_files import private_opener as private_opener

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


def home_identity(home: Path) -> list[int] | None:
    """The home folder's device and inode, which a server records in server.json: a copy of
    the home (`cp -a` while it was served) has its own, a move or a symlinked path the same."""
    try:
        st = os.stat(home)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


def names_home(info: Mapping[str, Any], home: Path) -> bool:
    """Whether server.json describes `home` itself, not the home it was copied from (whose
    server, alive, is not this one's: a client must not call it, `mind server stop` must not
    signal it)."""
    recorded = info.get("home_id")
    if recorded is not None:
        return bool(recorded == home_identity(home))
    homes = info.get("homes")  # a file written before home_id: the folder by its path
    if not isinstance(homes, list):
        return False
    with contextlib.suppress(OSError, RuntimeError, TypeError, ValueError):
        here = home.resolve()
        return any(Path(h).resolve() == here for h in homes if isinstance(h, str))
    return False


def read_info(home: Path) -> dict[str, Any] | None:
    """The home's server.json when a live server of this user wrote it for this home (not a
    copy's original), else None."""
    try:
        info = json.loads((home / INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply
        return None
    if not isinstance(info, dict):
        return None
    if not names_home(info, home) or not is_server_process(info):
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
    one lies there instead (unreadable, keys missing, pid gone or reused by a later process,
    or written for another home: this one is a copy of it)."""
    path = server_file(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, False
    except (OSError, ValueError, RecursionError):
        return None, path.is_file()
    if (
        not isinstance(data, dict)
        or not names_home(data, home)
        or not is_server_process(data, alive=any_pid_alive)
    ):
        return None, True
    return data, False


def copied_from_served_home(home: Path) -> dict[str, Any] | None:
    """The home's server.json when it was written for another home by a server that still
    runs (`home` is a copy of that home, made while it was served), else None: that server is
    alive, not stale, but it is the other home's, never this one's."""
    try:
        data = json.loads(server_file(home).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if (
        not isinstance(data, dict)
        or names_home(data, home)
        or not is_server_process(data, alive=any_pid_alive)
    ):
        return None
    return data


def serves_this_home(home: Path, info: Mapping[str, Any], timeout: float = 10.0) -> bool:
    """Whether the server `info` (the home's server.json) names answers for `home`, asked the
    server itself: server.json's word is not enough (a copied or edited file can name another
    home's server, which `mind server stop` must never signal). Its socket is the home's own,
    the process on the other end of it is the recorded pid (where the system says), and it
    takes this home's token. Without a socket (a path too long for one), its URL is asked."""
    token = None
    with contextlib.suppress(MindError):  # no token, or one open to others: not ours to use
        token = read_token(home)
    if not token:
        return False
    request = (
        f"GET /v1/minds HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    recorded = info.get("socket")
    if recorded is None:
        return _url_takes(str(info.get("url") or ""), request, timeout)
    socket_path = home / SOCKET_FILE
    if not isinstance(recorded, str) or os.path.abspath(recorded) != str(socket_path.absolute()):
        return False  # another home's socket
    if not own_private(socket_path, stat.S_IFSOCK):
        return False
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.settimeout(timeout)
            sock.connect(str(socket_path))
            peer = _peer_pid(sock)
            if peer is not None and peer != info.get("pid"):
                return False  # the socket is served by another process than server.json's
            sock.sendall(request)
            return sock.recv(64).startswith((b"HTTP/1.1 200", b"HTTP/1.0 200"))
        except OSError:
            return False


def _peer_pid(sock: Any) -> int | None:
    """The pid of the process at the other end of a Unix socket (Linux), else None."""
    import socket
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        pid, _, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, 12))
    except OSError:
        return None
    return int(pid)


def _url_takes(url: str, request: bytes, timeout: float) -> bool:
    """Whether the loopback server at `url` answers `request` with 200."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "::1", "localhost"):
        return False
    try:
        with socket.create_connection((parts.hostname, parts.port or 80), timeout) as sock:
            sock.sendall(request)
            return sock.recv(64).startswith((b"HTTP/1.1 200", b"HTTP/1.0 200"))
    except (OSError, ValueError):
        return False


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


def open_log(path: Path) -> IO[bytes]:
    """A server log (in its folder, made 0700) opened for appending, created 0600: it names
    the requests a mind was asked."""
    private_folder(path.parent)
    return open(path, "ab", opener=private_opener)


# How long a client's note that it started a server (server.starting) holds: a server that
# has not written server.json by then failed to start, and another may be started.
START_GRACE_S = 60.0


def mark_starting(home: Path, server_pid: int | None = None) -> None:
    """Note that this process is starting the home's server (server.starting, 0600): its own
    pid, then the server's once it is spawned (what `mind server stop` waits for)."""
    fd = os.open(home / STARTING_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n" + (f"{server_pid}\n" if server_pid is not None else ""))


def starting_server_pid(home: Path) -> int | None:
    """The pid of a server a client started lately for `home` that has not yet written
    server.json: alive, ours, and a `mind serve` of this home (a reused pid is not)."""
    path = home / STARTING_FILE
    try:
        if time.time() - path.stat().st_mtime > START_GRACE_S:
            return None
        lines = path.read_text(encoding="utf-8").split()
        pid = int(lines[1])
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        served = Path(os.fsdecode(command[command.index(b"--home") + 1])).resolve()
    except (OSError, ValueError, IndexError):
        return None
    serves = b"serve" in command and served == home.resolve()
    return pid if serves and pid_alive(pid) else None


def remove_if_ours(path: Path) -> None:
    with contextlib.suppress(OSError, ValueError, RecursionError, AttributeError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


# Variables that change what a command does: our settings and what LiteLLM's providers read
# (keys, base URLs, API versions, proxies, certificate bundles). MIND_HOME only picks the home
# and MIND_NO_SERVER only this switch, so neither counts.
_PROVIDER = re.compile(
    r"(_API_KEY|_API_TOKEN|_SECRET_ACCESS_KEY|_API_BASE|_BASE_URL|_API_URL|_ENDPOINT|"
    r"_API_VERSION|_TOKEN|_SECRET|_CREDENTIALS|_CLIENT_ID|_PROJECT|_LOCATION)$|"
    r"^(LITELLM_|OPENAI_|ANTHROPIC_|OLLAMA_|AZURE_|AWS_|HF_|HUGGINGFACE|VERTEX|GOOGLE_|"
    r"DATABRICKS_|GEMINI_|MISTRAL_|COHERE_|GROQ_|TOGETHER|REPLICATE_|WATSONX_)|"
    r"^(HTTPS?_PROXY|ALL_PROXY|NO_PROXY|REQUESTS_CA_BUNDLE|SSL_CERT_FILE|SSL_CERT_DIR)$",
    re.IGNORECASE,
)


_NOT_SETTINGS = {"MIND_HOME", "MIND_NO_SERVER"}


def startup_environment() -> dict[str, str]:
    """The environment as it was when the process started (`mindledger.startup_env`; see
    `env_fingerprint`)."""
    from mindledger.startup_env import ENVIRONMENT

    return dict(ENVIRONMENT)


def relevant_environment(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """The variables that change what a turn or a recall does, sorted."""
    return sorted(
        (name, value)
        for name, value in environ.items()
        if (name.upper().startswith("MIND_") and name.upper() not in _NOT_SETTINGS)
        or _PROVIDER.search(name)
    )


def env_fingerprint(environ: Mapping[str, str], home: Path, token: str) -> str:
    """An HMAC (keyed by the home's token) of the settings a server started with: the relevant
    environment, the size and time of the home's .env and config.json, and where the program
    and its interpreter are. The server writes it into server.json; a client whose own differs
    runs in-process."""
    files = home_files(home)
    # The code too: a server of another checkout or interpreter (same version number) differs.
    code = [sys.executable, os.path.dirname(os.path.abspath(__file__))]
    message = json.dumps([relevant_environment(environ), files, code], sort_keys=True)
    return hmac_sha256(token.encode(), message.encode())


def hmac_sha256(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) in hex, as `hmac.new(key, message, hashlib.sha256)` (tested
    equal), on the interpreter's own SHA-256: `hashlib` loads OpenSSL, a fifth of what the
    warm server's client imports."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12 on
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment,unused-ignore]
    block = 64
    if len(key) > block:
        key = sha256(key).digest()
    key = key.ljust(block, b"\0")
    inner = sha256(bytes(k ^ 0x36 for k in key) + message).digest()
    return str(sha256(bytes(k ^ 0x5C for k in key) + inner).hexdigest())


def home_files(home: Path) -> list[list[Any]]:
    """The size and time of the home's .env and config.json: a server records them at start
    (not secret), so a client can tell that they changed since."""
    files: list[list[Any]] = []
    for name in (".env", "config.json"):
        try:
            st = os.stat(home / name)
            files.append([name, st.st_size, st.st_mtime_ns])
        except OSError:
            files.append([name, None, None])
    return files


TOKEN_BYTES = 32


class TokenFileError(MindError):
    """Raised when a home's server-token file cannot be read or made safely."""


def token_path(home: Path) -> Path:
    """Where a home keeps its token."""
    return home / TOKEN_FILE


def ensure_token(home: Path) -> str:
    """The home's token, made on first use (0600, created exclusively so two servers starting
    at once agree on one token)."""
    path = token_path(home)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_token(home)
    except OSError as e:
        raise TokenFileError(f"cannot create {path}: {e.strerror or e}") from None
    import secrets  # the server's side only: the client reads the token

    token = secrets.token_urlsafe(TOKEN_BYTES)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token


def read_token(home: Path) -> str:
    """The token kept in the home (TokenFileError when missing, empty or open to others)."""
    path = token_path(home)
    try:
        mode = path.stat().st_mode & 0o777
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise TokenFileError(f"cannot read {path}: {e}") from None
    if mode & 0o077:
        raise TokenFileError(
            f"{path} can be read by other users (mode {mode:o}); run `chmod 600 {path}`"
        )
    if len(text) < 16:
        raise TokenFileError(f"{path} holds no usable token; delete it to make a new one")
    return text
