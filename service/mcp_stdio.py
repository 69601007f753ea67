"""`mind mcp` answers its client's `initialize` before it imports the MCP SDK and opens the mind.

An MCP client waits for the answer to `initialize` before anything else, and importing the SDK
(its protocol types are pydantic models for every protocol version) and the floor took more than
a second of CPU. That answer depends on nothing the SDK computes per connection: the protocol
version it negotiates from the client's, the server's fixed capabilities, its name (the mind's)
and version, and the instructions. So this module, standard library only, reads the client's
first line and, when it is a well-formed `initialize`, answers it as the SDK would (a test
compares the two answers); then the SDK is given the same line first, as if it had read it, and
its own answer to it is dropped (a refusal of it is logged to stderr). Anything else (another
first message, a modern-era request, malformed parameters, a PostgreSQL home) is left to the SDK.

The process's own stdin and stdout are taken here as the SDK's stdio transport would take them:
the wire is served from private duplicates while fd 0 reads the null device and fd 1 writes to
stderr, so a library's stray print never corrupts the protocol.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

# The protocol versions the SDK negotiates through `initialize`
# (`mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS`, tested equal); the last is its counter-offer.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

# What the SDK announces for our server (tools and resources, fixed lists; tested equal).
CAPABILITIES = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}


@dataclass
class Wire:
    """The protocol's ends: the client's messages in, ours out (binary, private descriptors)."""

    incoming: IO[bytes]
    outgoing: IO[bytes]


def take_stdio() -> Wire:
    """Serve the wire from duplicates of fd 0 and 1, pointing those at the null device and at
    stderr (as the SDK's stdio transport does with them)."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return Wire(os.fdopen(wire_in, "rb"), os.fdopen(wire_out, "wb"))


def early_start(home: str) -> tuple[Wire, bytes, int | str | None]:
    """Take the wire, read the client's first line and answer it when it is a well-formed
    `initialize` and the mind's name can be read without the settings
    (`identity_view.plain_sqlite_name`); the wire, the line and the id answered (or None).
    A bad setting found after this is still the process's one error line and exit 1: the
    client sees the server end after its `initialize`."""
    wire = take_stdio()
    first = wire.incoming.readline()
    request = initialize_request(first)
    if request is None:
        return wire, first, None
    from mindledger.identity_view import plain_sqlite_name

    name = plain_sqlite_name(Path(home))
    if name is None:
        return wire, first, None
    from importlib.metadata import version

    wire.outgoing.write(initialize_answer(*request, name, version("mindledger")))
    wire.outgoing.flush()
    return wire, first, request[0]


def initialize_request(line: bytes) -> tuple[int | str, str] | None:
    """The id and requested protocol version of a well-formed `initialize` request, else None
    (the SDK validates the rest and answers whatever this does not)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply for the parser
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    request_id, params = message.get("id"), message.get("params")
    if message.get("method") != "initialize" or not isinstance(params, dict):
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    client, capabilities = params.get("clientInfo"), params.get("capabilities")
    version = params.get("protocolVersion")
    if not isinstance(version, str) or not isinstance(capabilities, dict):
        return None
    if not all(isinstance(v, dict) for v in capabilities.values()):
        return None
    if not isinstance(client, dict) or not all(
        isinstance(client.get(k), str) for k in ("name", "version")
    ):
        return None
    return request_id, version


def initialize_answer(request_id: int | str, requested: str, name: str, version: str) -> bytes:
    """The SDK's answer to `initialize`, as its stdio transport writes it (one JSON line)."""
    from mindledger.service.mcp_server import INSTRUCTIONS  # its module imports no SDK

    negotiated = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    result = {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": negotiated,
        "serverInfo": {"name": server_name(name), "version": version},
    }
    answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return (json.dumps(answer, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def server_name(mind_name: str) -> str:
    """The MCP server's name for a mind (stdio and HTTP alike)."""
    return f"mindledger {mind_name}"


class Pending:
    """The requests the client sent that are not answered yet. The SDK ends its session when
    the client's end of the wire closes, dropping the answers still being worked out (a client
    that writes its requests and closes stdin at once, as `printf ... | mind mcp` does, got
    about half of them); so the end of the wire is passed on only once every request read has
    been answered, or a request was cancelled, or `END_WAIT_S` passed since the last answer."""

    END_WAIT_S = 900.0  # the longest a tool call may take (a turn on a slow model) at the end

    def __init__(self) -> None:
        import threading

        self._ids: dict[tuple[str, int | str], int] = {}
        self._changed = threading.Condition()

    @staticmethod
    def _key(request_id: int | str) -> tuple[str, int | str]:
        return (type(request_id).__name__, request_id)  # 1 and "1" are different ids

    def asked(self, request_id: int | str) -> None:
        with self._changed:
            key = self._key(request_id)
            self._ids[key] = self._ids.get(key, 0) + 1

    def settled(self, request_id: object) -> None:
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return
        with self._changed:
            key = self._key(request_id)
            if key in self._ids:
                self._ids[key] -= 1
                if not self._ids[key]:
                    del self._ids[key]
                self._changed.notify_all()

    def wait_all_answered(self) -> None:
        with self._changed:
            while self._ids:
                if not self._changed.wait(timeout=self.END_WAIT_S):
                    print(
                        f"MCP: {len(self._ids)} request(s) still unanswered "
                        f"{self.END_WAIT_S:.0f} s after the client closed its end",
                        file=sys.stderr,
                    )
                    return


def screen(line: str) -> tuple[bytes | None, Any]:
    """A line of the client's as the SDK will take it: (None, the SDK's message) for a JSON-RPC
    message, (None, None) for a blank line, else (our answer, None). The SDK drops a line it
    cannot take without a word, and a request the client waits on would never be answered, so
    the answer is the protocol's: -32700 for a line that is not JSON, -32600 (with the id, when
    one can be read) for JSON that is no message (a boolean id included: the SDK reads `true`
    as 1)."""
    if not line.strip():
        return None, None
    try:
        raw = json.loads(line)
    except ValueError:
        return _error(None, -32700, "Parse error: the line is not JSON"), None
    except RecursionError:  # raised out of the reader thread, it ended the whole session
        return _error(None, -32700, "Parse error: the line is nested too deeply"), None
    raw_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(raw_id, bool) or not isinstance(raw_id, int | str):
        raw_id = None
    import mcp_types

    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as e:
        # The SDK's parser refuses what json.loads took (a lone surrogate such as \ud800): a
        # parse error, in its words, as the HTTP transport answers it; not "no message".
        first = e.errors()[0] if hasattr(e, "errors") and e.errors() else {}
        if first.get("type") == "json_invalid":
            said = " ".join(str(first.get("msg", "")).removeprefix("Invalid JSON: ").split())
            return _error(raw_id, -32700, f"Parse error: {said or 'the line is not JSON'}"), None
        message = None
    if message is None or (isinstance(raw, dict) and isinstance(raw.get("id"), bool)):
        return _error(raw_id, -32600, "Invalid Request: not a JSON-RPC 2.0 message"), None
    return None, message


def refusal(line: str) -> bytes | None:
    """Our answer to a line the SDK cannot take (`screen`), else None."""
    return screen(line)[0]


def _error(request_id: int | str | None, code: int, message: str) -> bytes:
    answer = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return (json.dumps(answer, separators=(",", ":")) + "\n").encode()


class Replayed:
    """The client's messages for the SDK: the first line (already read here) again, then the
    rest of the wire (a text file as `anyio.wrap_file` reads it, line by line). A line that is
    no JSON-RPC message is answered here and not passed on; the end of the wire is passed on
    once every request read has been answered (`Pending`)."""

    def __init__(self, first: bytes, rest: IO[bytes], out: IO[bytes], pending: Pending) -> None:
        import io

        self._first: str | None = first.decode("utf-8", errors="replace")
        self._rest = io.TextIOWrapper(rest, encoding="utf-8", errors="replace")
        self._out = out
        self._pending = pending

    def readline(self) -> str:
        while True:
            if self._first is not None:
                line, self._first = self._first, None
            else:
                line = self._rest.readline()
            if not line:
                self._pending.wait_all_answered()
                return line
            refused, message = screen(line)
            if refused is None:
                self._note(message)
                return line
            self._out.write(refused)
            self._out.flush()

    def _note(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.JSONRPCRequest):
            self._pending.asked(message.id)  # the id as the SDK will answer it
        elif (
            isinstance(message, mcp_types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and message.params
        ):
            self._pending.settled(message.params.get("requestId"))  # not to be answered


class AnsweredOnce:
    """Our messages to the client: everything the SDK writes, but its own answer to the
    `initialize` already answered here (the first message carrying that id)."""

    def __init__(self, out: IO[bytes], answered: int | str | None, pending: Pending) -> None:
        self._out = out
        self._answered = answered
        self._pending = pending

    def write(self, text: str) -> int:
        message = _loads(text)
        if self._answered is not None and self._is_the_answer(message):
            self._pending.settled(message["id"])
            return len(text)
        self._out.write(text.encode())
        if isinstance(message, dict) and "method" not in message:
            self._out.flush()  # on the wire before the end it may release
            self._pending.settled(message.get("id"))
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def _is_the_answer(self, message: Any) -> bool:
        if not isinstance(message, dict) or message.get("id") != self._answered:
            return False
        if isinstance(message.get("id"), bool) or "method" in message:
            return False
        self._answered = None
        if "error" in message:  # the client was told yes; say why it will not work
            print(
                f"MCP initialize refused after it was answered: {message['error']}", file=sys.stderr
            )
        return True


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
