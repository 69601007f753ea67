"""MCP: one mind's tools and resources for agents (`mind mcp` over stdio, `/mcp/{name}` over
streamable HTTP on the server, behind the same bearer token).

Tools (service/mcp_tools.py): `turn`, and the reads `recall`, `commitments`, `threads`,
`concepts`, `identity` and `query` (the read-only sandbox of `mind query`), each answering
with the use case's JSON as structured content and a text rendering. Resources:
`mind://identity` and `mind://commitments/open`. Each mind is its own MCP server: on HTTP the
path names it (`/mcp/Echo`); `/mcp` alone serves the one mind a token opens.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import Receive, Scope, Send

    from mindledger.compose import Home
    from mindledger.service.app import Extension
    from mindledger.service.mcp_stdio import Wire
    from mindledger.service.minds import Minds, ServedMind

INSTRUCTIONS = (
    "A mind with a hash-linked ledger memory. Call `turn` to talk to it (its reply, and the "
    "commitments, claims and identity changes the reply made); `recall` to search its memory; "
    "`commitments` / `threads` / `concepts` / `identity` for what it has promised, what it is "
    "working on, what it knows of and who it is; `query` for read-only SQL over its read models."
)


def mind_mcp(mind: ServedMind, turn_pool: ThreadPoolExecutor) -> MCPServer:
    """The MCP server of one served mind; turns run in `turn_pool` (a client that goes away
    cannot cancel a turn: it finishes and is recorded whole)."""
    from importlib.metadata import version

    from mcp.server.mcpserver import MCPServer

    from mindledger.service.mcp_stdio import server_name
    from mindledger.service.mcp_tools import mind_tools

    server: MCPServer = MCPServer(
        server_name(mind.name),
        instructions=INSTRUCTIONS,
        version=version("mindledger"),
        log_level="WARNING",
        tools=mind_tools(mind, turn_pool),
    )

    @server.resource(
        "mind://identity",
        name="identity",
        description="The mind's identity: name, model, settings and its history.",
        mime_type="application/json",
    )
    async def identity() -> str:
        return json.dumps((await mind.aio.identity()).model_dump(mode="json"))

    @server.resource(
        "mind://commitments/open",
        name="open commitments",
        description="What the mind has promised and not yet closed.",
        mime_type="application/json",
    )
    async def open_commitments() -> str:
        return json.dumps((await mind.aio.commitments(False)).model_dump(mode="json"))

    return server


def serve_stdio(home: Home, wire: Wire, first: bytes, answered: int | str | None) -> None:
    """Serve one mind over stdio until the client closes it (stdout is the protocol), on the
    wire `mcp_stdio.early_start` took, whose `first` line (answered already when `answered`
    names its id) the SDK reads first."""
    import secrets

    import anyio

    from mindledger.service.clients import serving_locally
    from mindledger.service.mcp_stdio import AnsweredOnce, Pending, Replayed
    from mindledger.service.minds import Minds, ServedMind

    serving_locally()  # the client started this process on this machine: it sees our paths

    # No HTTP here, so no token is made in the home; the mind needs one to exist.
    minds = Minds([ServedMind(home, secrets.token_urlsafe(32))], turn_workers=4)
    mind = next(iter(minds))
    server = mind_mcp(mind, minds.turn_pool)
    pending = Pending()
    replayed = Replayed(first, wire.incoming, wire.outgoing, pending)
    stdin = anyio.wrap_file(replayed)  # type: ignore[arg-type]
    stdout = anyio.wrap_file(AnsweredOnce(wire.outgoing, answered, pending))  # type: ignore[arg-type]

    async def run() -> None:
        from mcp.server.stdio import stdio_server

        # As the SDK's `run_stdio_async`, on the wire taken above.
        async with stdio_server(stdin, stdout) as (read, write):
            lowlevel = server._lowlevel_server
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        minds.close(wait_s=60.0)


class _MindRoutes:
    """The ASGI app behind `/mcp` and `/mcp/{name}` (already past the token check): the named
    mind's MCP session manager, or a JSON error."""

    def __init__(self, minds: Minds) -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        self.minds = minds
        self.servers: dict[int, MCPServer] = {}
        for mind in minds:
            server = mind_mcp(mind, minds.turn_pool)
            # Every request carries the mind's bearer token, which a page another site
            # rebinds to this address cannot send; the Host check would refuse the server's
            # own --allow-remote address and its Unix socket.
            server.streamable_http_app(
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
            )
            self.servers[id(mind)] = server

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Each mind's MCP session manager runs while the server does."""
        async with contextlib.AsyncExitStack() as stack:
            for server in self.servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from mindledger.service.errors import error_response

        opened: list[ServedMind] = scope.get("mind.opened", [])
        name = scope.get("path_params", {}).get("name")
        if name is None and len(opened) != 1:
            response = error_response(
                400,
                "bad_request",
                "this token opens several minds: address one as /mcp/{name} "
                "(GET /v1/minds lists them)",
            )
            await response(scope, receive, send)
            return
        mind = (
            opened[0]
            if name is None
            else next((m for m in opened if m.name == unquote(name)), None)
        )
        if mind is None:
            response = error_response(
                404,
                "unknown_mind",
                f"no mind called {unquote(name or '')!r} is served for this token "
                "(GET /v1/minds lists them)",
            )
            await response(scope, receive, send)
            return
        await self.servers[id(mind)].session_manager.handle_request(scope, receive, send)


class _Asgi:
    """An ASGI callable as an object, so Starlette's Route serves it as an app (a plain
    function would be taken for a request handler)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Any]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def extension(minds: Minds) -> Extension:
    """`/mcp/{name}` and `/mcp` on the server, behind the bearer check (service.app)."""
    from starlette.routing import Route

    from mindledger.service.app import Extension, require_token

    routes = _MindRoutes(minds)
    guarded = _Asgi(require_token(routes, minds))
    return Extension(
        mounts=[Route("/mcp", guarded, methods=None), Route("/mcp/{name}", guarded, methods=None)],
        lifespan=routes.lifespan,
    )
