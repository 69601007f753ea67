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
    except ValueError:
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


class Replayed:
    """The client's messages for the SDK: the first line (already read here) again, then the
    rest of the wire (a text file as `anyio.wrap_file` reads it, line by line)."""

    def __init__(self, first: bytes, rest: IO[bytes]) -> None:
        import io

        self._first: str | None = first.decode("utf-8", errors="replace")
        self._rest = io.TextIOWrapper(rest, encoding="utf-8", errors="replace")

    def readline(self) -> str:
        if self._first is not None:
            line, self._first = self._first, None
            return line
        return self._rest.readline()


class AnsweredOnce:
    """Our messages to the client: everything the SDK writes, but its own answer to the
    `initialize` already answered here (the first message carrying that id)."""

    def __init__(self, out: IO[bytes], answered: int | str | None) -> None:
        self._out = out
        self._answered = answered

    def write(self, text: str) -> int:
        if self._answered is not None and self._is_the_answer(text):
            return len(text)
        self._out.write(text.encode())
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def _is_the_answer(self, text: str) -> bool:
        try:
            message: Any = json.loads(text)
        except ValueError:
            return False
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
