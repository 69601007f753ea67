"""MCP: one mind's tools and resources for agents (`mind mcp` over stdio, `/mcp/{name}` over
streamable HTTP on the server, behind the same bearer token).

Tools: `turn`, `recall`, `commitments`, `threads`, `query` (the read-only sandbox of `mind
query`). Each tool's structured content is the use case's JSON, the same data `--json` and the
HTTP API give; the turn's text content is a result shaped like PMM's `pmm_turn`
(service/turn_result.py), for agents written against PMM. Resources:
`mind://identity` and `mind://commitments/open`. Each mind is its own MCP server: on HTTP the
path names it (`/mcp/Echo`); `/mcp` alone serves the one mind a token opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from mcp_types import CallToolResult  # at run time: the SDK reads the turn tool's annotation

from mindledger.domain.budgets import DEFAULT_BUDGET
from mindledger.domain.errors import MindError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import Receive, Scope, Send

    from mindledger.compose import Home
    from mindledger.service.app import Extension
    from mindledger.service.minds import Minds, ServedMind

T = TypeVar("T")
INSTRUCTIONS = (
    "A mind with a hash-linked ledger memory. Call `turn` to talk to it (its reply, and the "
    "commitments, claims and identity changes the reply made); `recall` to search its memory; "
    "`commitments` / `threads` for what it has promised and what it is working on; `query` "
    "for read-only SQL over its read models."
)


def mind_mcp(mind: ServedMind, turn_pool: ThreadPoolExecutor) -> MCPServer:
    """The MCP server of one served mind; turns run in `turn_pool` (a client that goes away
    cannot cancel a turn: it finishes and is recorded whole)."""
    from importlib.metadata import version

    from mcp.server.mcpserver import MCPServer

    server: MCPServer = MCPServer(
        f"mindledger {mind.name}",
        instructions=INSTRUCTIONS,
        version=version("mindledger"),
        log_level="WARNING",
    )

    async def blocking(fn: Callable[[], T], pool: ThreadPoolExecutor | None = None) -> T:
        from mcp.server.mcpserver.exceptions import ToolError

        from mindledger.error_report import failure_message
        from mindledger.service.errors import internal_error_message

        home = mind.home.path
        try:
            if pool is not None:
                return await asyncio.wrap_future(pool.submit(fn))
            return await asyncio.to_thread(fn)
        except MindError as e:  # bad input or a refused read: the message says what to change
            message = failure_message(e, home, mind.secrets, full_path=False)
            raise ToolError(" ".join(message.split())) from None
        except Exception as e:  # the tool's boundary: one line, the traceback in the home's log
            raise ToolError(internal_error_message(e, mind.secrets, home)) from None

    @server.tool()
    async def turn(
        text: str,
        model: str | None = None,
        mock_reply: str | None = None,
        api_base: str | None = None,
        budget: int = DEFAULT_BUDGET,
        include_events: bool = False,
    ) -> CallToolResult:
        """Say `text` to the mind: one recorded turn. Structured content: the turn as `mind
        turn --json` prints it (`reply`, `status`, `failure`, `opened`/`closed`, `claims`,
        `rejections`, `context`, `events`, ...). Text content, shaped like PMM's `pmm_turn`:
        its visible reply (`assistant`), the raw reply with control lines, `generation_status`
        ("complete" or "failed") and `generation_failure`, the ledger `event_range`, commitments
        `opened`/`closed`, `claims`, `validation_failures` (refused control lines),
        `identity_updates`, and with `include_events` the turn's ledger events. `model`: a model
        spec for this turn (default: the mind's; `mock` with `mock_reply` for a scripted reply);
        `budget`: memory tokens."""
        from mcp_types import TextContent

        from mindledger.safe_text import json_text
        from mindledger.service.turn_result import turn_result

        def run() -> CallToolResult:
            done = mind.run_turn(
                text, model=model, mock_reply=mock_reply, api_base=api_base, budget=budget
            )
            data = done.data  # the result's JSON dump, as every front-end gives it
            shaped = turn_result(mind, data, done.outcome.notification_ids, include_events)
            text_content = TextContent(type="text", text=json_text(shaped, indent=None))
            return CallToolResult(content=[text_content], structured_content=data)

        return await blocking(run, turn_pool)

    @server.tool()
    async def recall(query: str, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
        """Search the mind's memory for `query`: the items a turn would see (`mind recall`)."""
        return await blocking(lambda: mind.recall(query, budget).model_dump(mode="json"))

    @server.tool()
    async def commitments(include_closed: bool = False) -> list[dict[str, Any]]:
        """The mind's open commitments (with `include_closed`, the closed ones too)."""
        return await blocking(lambda: mind.commitments(include_closed).model_dump(mode="json"))

    @server.tool()
    async def threads(include_resolved: bool = False) -> list[dict[str, Any]]:
        """The mind's live threads by tension (with `include_resolved`, resolved ones too)."""
        return await blocking(lambda: mind.threads(include_resolved).model_dump(mode="json"))

    @server.tool()
    async def query(sql: str) -> list[dict[str, Any]]:
        """Read-only SQL over the mind's read models (the sandbox and limits of `mind query`):
        one object per row."""
        return await blocking(lambda: mind.query(sql).model_dump(mode="json"))

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


def serve_stdio(home: Home) -> None:
    """Serve one mind over stdio until the client closes it (stdout is the protocol)."""
    import secrets

    from mindledger.service.minds import Minds, ServedMind

    # No HTTP here, so no token is made in the home; the mind needs one to exist.
    minds = Minds([ServedMind(home, secrets.token_urlsafe(32))], turn_workers=4)
    mind = next(iter(minds))
    try:
        mind_mcp(mind, minds.turn_pool).run("stdio")
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
