"""Whether a request comes from this machine, so that the server names its own files only to
a client that could read them anyway.

A server started with --allow-remote answers clients on other machines; its error messages and
warnings may name the mind's home (`/home/ann/mind`, its `logs/errors.log`). To a client that
is not known to be on this machine they name it "the mind's home" instead
(`error_report.within_home`); the command line through the home's socket, and a program on
loopback, see the paths the in-process command prints.

A request is local when it came through a Unix socket (uvicorn gives it no client address) or
from a loopback address, without a forwarding header either way (a proxy in front of the
socket relays clients from elsewhere too). A reverse proxy on this machine that sets
`X-Forwarded-For` is trusted by uvicorn for loopback peers (its `forwarded_allow_ips`), so its
clients carry their own addresses; one that sends no forwarding header makes every client look
local, and is the one case this cannot tell apart.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from mindledger.error_report import within_home

# Headers a proxy adds for the client behind it: a request that has one came from elsewhere.
FORWARDING = frozenset({b"forwarded", b"x-forwarded-for", b"x-real-ip"})
# Outside a request (a stopping server's log, a thread not started from one): as if remote.
_local: ContextVar[bool] = ContextVar("client_on_this_machine", default=False)


def is_local(scope: Scope) -> bool:
    """Whether the request of `scope` comes from this machine (see the module's words)."""
    # A forwarding header first, whatever the transport: a proxy in front of the home's socket
    # relays clients from elsewhere as a loopback proxy does.
    if any(name in FORWARDING for name, _ in scope.get("headers", ())):
        return False
    client = scope.get("client")
    if not client:
        return True  # a Unix socket: only this machine can reach it
    try:
        return ipaddress.ip_address(str(client[0]).split("%")[0]).is_loopback
    except ValueError:  # not an address (a test client's "testclient"): not known to be here
        return False


def shows_paths() -> bool:
    """Whether the current request's client is told the server's paths (`is_local`)."""
    return _local.get()


def for_client(text: str, homes: Iterable[Path]) -> str:
    """`text` as the current request's client is told it: as it is on this machine, else
    with each of `homes` named within the home (`error_report.within_home`)."""
    if shows_paths():
        return text
    for home in homes:
        text = within_home(text, home)
    return text


def data_for_client(data: Any, homes: Iterable[Path]) -> Any:
    """A result's JSON (texts, lists, objects) with `for_client` applied to every text in it:
    a query's rows (DuckDB names its file in `duckdb_databases()`, `pragma_database_list`,
    its settings) and a verify's anchors (`ledger-head.json`) are data, not messages."""
    if shows_paths():
        return data
    homes = list(homes)
    if isinstance(data, str):
        return for_client(data, homes)
    if isinstance(data, list):
        return [data_for_client(v, homes) for v in data]
    if isinstance(data, dict):
        return {k: data_for_client(v, homes) for k, v in data.items()}
    return data


def serving_locally() -> None:
    """This process's requests all come from this machine (`mind mcp` over stdio)."""
    _local.set(True)


class ClientOrigin:
    """ASGI middleware: notes, for the handlers of each request, whether it is local."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _local.set(is_local(scope))
        try:
            await self.app(scope, receive, send)
        finally:
            _local.reset(token)
