"""`build_app(minds)`: the Starlette application every transport serves (TCP and Unix socket).

Routes come from one table of `Endpoint`s (service/http_api.py and any extension's), so the
OpenAPI document lists exactly what is served. Extensions: the modules `service.openai_api`,
`service.mcp_server` and `service.web`, when present, each expose `extension(minds) ->
Extension` (more endpoints, mounted sub-apps, a lifespan); tests may pass extensions directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import importlib.util
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from eventsourcing.persistence import PersistenceError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mindledger.domain.errors import MindError
from mindledger.domain.redaction import redact
from mindledger.error_report import failure_message, was_disk_full, was_unavailable
from mindledger.notices import heard
from mindledger.service.auth import bearer
from mindledger.service.clients import ClientOrigin, shows_paths
from mindledger.service.endpoints import (
    DEFAULT_MAX_BODY,
    Call,
    Endpoint,
    JsonResponse,
    check_params,
    read_json,
    with_warnings,
)
from mindledger.service.errors import (
    ApiError,
    error_response,
    internal_error_response,
    log,
    mind_error_response,
)
from mindledger.service.minds import Minds, ServedMind

CLIENT_GONE = 499  # the status the request log shows for a client that left (nginx's)
OPTIONAL_EXTENSIONS = (
    "mindledger.service.openai_api",
    "mindledger.service.openai_models",
    "mindledger.service.openai_completions",
    "mindledger.service.openai_embeddings",
    "mindledger.service.openai_responses",
    "mindledger.service.mcp_server",
    "mindledger.service.web",
)

RequestHook = Callable[[str, str, int, float, "str | None"], None]


@dataclass
class Extension:
    """What another module adds to the server: endpoints (checked, documented and served like
    the /v1 ones), mounts (sub-apps served as they are: wrap them in `require_token` unless
    they check tokens themselves) and a lifespan (entered when the server starts)."""

    endpoints: list[Endpoint] = field(default_factory=list)
    mounts: list[BaseRoute] = field(default_factory=list)
    lifespan: Callable[[], AbstractAsyncContextManager[None]] | None = None


@dataclass
class ServerState:
    """What the process watches: stopping (set on SIGTERM; long streams end) and when a stop
    stops waiting for requests (`stop_deadline`, monotonic), requests in flight and when the
    last one ended (idle exit), and a hook per finished request (log)."""

    stopping: threading.Event = field(default_factory=threading.Event)
    stop_deadline: float = math.inf
    in_flight: int = 0
    last_activity: float = field(default_factory=time.monotonic)
    on_request: RequestHook | None = None


def optional_extensions(minds: Minds) -> list[Extension]:
    """The extensions whose modules are present."""
    found = []
    for name in OPTIONAL_EXTENSIONS:
        if importlib.util.find_spec(name) is not None:
            module = importlib.import_module(name)
            if hasattr(module, "extension"):
                found.append(module.extension(minds))
    return found


def all_secrets(minds: Minds) -> list[str]:
    """Every value to redact from what the server logs or answers: tokens and keys."""
    values = [m.token for m in minds]
    for m in minds:
        values += m.secrets
    return values


def authenticate(authorization: str | None, minds: Minds) -> list[ServedMind]:
    """The minds an `Authorization` header's token opens; 401 when none."""
    token = bearer(authorization)
    if token is None:
        raise ApiError(
            401,
            "unauthorized",
            # Worded so the redaction of credentials in answers leaves it whole (it would take
            # the header written out as a credential).
            "missing bearer token: send the mind's token (its home's server-token file holds "
            "it) in the Authorization header, after the word Bearer",
        )
    opened = minds.for_token(token)
    if not opened:
        raise ApiError(401, "unauthorized", "the bearer token opens no mind served here")
    return opened


def require_token(app: ASGIApp, minds: Minds) -> ASGIApp:
    """`app` behind the bearer check; the minds the token opens are in scope["mind.opened"]."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        try:
            opened = authenticate(Request(scope).headers.get("authorization"), minds)
        except ApiError as e:
            response = error_response(e.status, e.code, e.message, _CHALLENGE)
            await response(scope, receive, send)
            return
        await app({**scope, "mind.opened": opened}, receive, send)

    return guarded


_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="mindledger"'}


STOP_POLL_S = 0.1  # how often a request still running checks for a stop's deadline


async def _unless_stopped(work: Awaitable[Any], state: ServerState) -> Any:
    """What `work` gives, or a 503 once a stop's grace has run out: the client hears why
    instead of a dropped connection (a turn still waiting on its model is then recorded
    interrupted by the stopping process, unless it finishes first: service/process.py)."""
    stopped = ApiError(
        503,
        "server_stopping",
        "the server stopped before this request finished; if it had started a turn, the "
        "turn is recorded finished or interrupted (`mind log` shows which)",
    )
    task = asyncio.ensure_future(work)
    while not task.done():
        try:
            await asyncio.wait({task}, timeout=STOP_POLL_S)
        except asyncio.CancelledError:
            task.cancel()  # the handler hears it as it did before this wrapper
            if not state.stopping.is_set():
                raise
            # uvicorn's own stop wait gave up on the request before the check below saw the
            # deadline (a starved event loop): the client is answered all the same.
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            raise stopped from None
        if not task.done() and time.monotonic() >= state.stop_deadline:
            task.cancel()
            raise stopped
    return task.result()


def _route(
    ep: Endpoint, minds: Minds, max_body: int, secrets: list[str], state: ServerState
) -> Route:
    homes = [m.home.path for m in minds]

    async def endpoint(request: Request) -> Response:
        # The warnings the request's use case gave go back with its answer, as the command
        # line would have printed them running it in-process.
        with heard() as warnings:
            response = await answer(request)
        return with_warnings(response, warnings, secrets, homes)

    async def answer(request: Request) -> Response:
        mind: ServedMind | None = None
        opened: list[ServedMind] = []
        try:
            opened = authenticate(request.headers.get("authorization"), minds) if ep.auth else []
            if "name" in request.path_params:
                name = request.path_params["name"]
                mind = next((m for m in opened if m.name == name), None)
                if mind is None:
                    raise ApiError(
                        404,
                        "unknown_mind",
                        f"no mind called {name!r} is served for this token "
                        "(GET /v1/minds lists them)",
                    )
            params = check_params(request, ep.params, ep.open_query)
            body = {}
            if ep.body is not None:
                from mindledger.service.bodies import NoBody
                from mindledger.service.body_check import check_body

                data = await read_json(request, max_body, optional=ep.body is NoBody)
                body = check_body(data, ep.body)
            call = Call(request, params, body, mind, opened, minds, max_body)
            result = await _unless_stopped(ep.handler(call), state)
        except ApiError as e:
            headers = _CHALLENGE if e.status == 401 else None
            return error_response(
                e.status, e.code, redact(e.message, secrets), headers, param=e.param
            )
        except MindError as e:
            return mind_error_response(e, secrets, _home_of(mind, opened))
        except PersistenceError as e:
            if was_disk_full(e, _home_of(mind, opened)) or was_unavailable(e):
                return internal_error_response(e, secrets, _home_of(mind, opened))  # 507, 503
            full = shows_paths()
            message = failure_message(e, _home_of(mind, opened), secrets, full_path=full)
            return error_response(500, "ledger_error", message)
        except ClientDisconnect:
            # The client left before its request was read: nothing was done; not a failure.
            log.info("%s %s: the client went away before its request was read", ep.method, ep.path)
            return Response(status_code=CLIENT_GONE)
        except Exception as e:  # never a traceback to the client
            return internal_error_response(e, secrets, _home_of(mind, opened))
        return result if isinstance(result, Response) else JsonResponse(result)

    return Route(ep.path, endpoint, methods=[ep.method], name=f"{ep.method} {ep.path}")


def _home_of(mind: ServedMind | None, opened: list[ServedMind]) -> Path | None:
    """The home whose errors log keeps a failure's traceback: the mind the route names, else
    the one mind the token opens (none for a token that opens several)."""
    if mind is None and len(opened) == 1:
        mind = opened[0]
    return mind.home.path if mind is not None else None


class RequestLog:
    """Counts requests in flight (idle exit) and reports each finished one to the hook: method,
    path, status and milliseconds; never a body, a query string or a header."""

    def __init__(self, app: ASGIApp, state: ServerState) -> None:
        self.app, self.state = app, state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status, start = 500, time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        self.state.in_flight += 1
        try:
            await self.app(scope, receive, sending)
        finally:
            self.state.in_flight -= 1
            self.state.last_activity = time.monotonic()
            if self.state.on_request is not None:
                path = scope.get("path", "")
                ms = (time.perf_counter() - start) * 1000
                shown = logged_path(scope)
                self.state.on_request(scope["method"], shown, status, ms, _mind_in(path))


def logged_path(scope: Scope) -> str:
    """The path as the client sent it, still percent-encoded (a `%0A` stays those three
    characters, so no client can write a line of its own into the log), with every byte that
    is not printable ASCII percent-encoded too; a matched route's parameters other than the
    mind's name are logged as their names (`{ref}`: a knowledge item's question is text the
    owner may forget, and a log is never scrubbed)."""
    raw = scope.get("raw_path")
    if not isinstance(raw, bytes):
        raw = str(scope.get("path", "")).encode("utf-8", "surrogateescape")
    shown = "".join(chr(b) if 0x21 <= b <= 0x7E else f"%{b:02X}" for b in raw)
    template = getattr(scope.get("route"), "path_format", None)
    if not isinstance(template, str) or "{" not in template:
        return shown
    parts, names = shown.split("/"), template.split("/")
    if len(parts) != len(names):
        return shown
    return "/".join(
        n if n.startswith("{") and n != "{name}" else p for p, n in zip(parts, names, strict=True)
    )


def _mind_in(path: str) -> str | None:
    parts = path.split("/")
    return unquote(parts[3]) if len(parts) > 3 and parts[1:3] == ["v1", "minds"] else None


def build_app(
    minds: Minds,
    *,
    extensions: Sequence[Extension] | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    state: ServerState | None = None,
    cors: Sequence[str] = (),
) -> Starlette:
    """The server's application over `minds`. `extensions`: default, the optional modules;
    `cors`: the origins browsers may call it from (checked: service/cors.py), none by default."""
    from importlib.metadata import version

    from mindledger.service.http_api import endpoints
    from mindledger.service.openapi import openapi_document

    state = state or ServerState()
    extensions = optional_extensions(minds) if extensions is None else list(extensions)
    table = endpoints() + [ep for ext in extensions for ep in ext.endpoints]

    @functools.cache
    def document() -> dict[str, Any]:
        # Built on the first request: pydantic takes a moment over the result schemas, which
        # a server's start (and every app a test builds) need not pay.
        return openapi_document(table, version("mindledger"))

    async def openapi(request: Request) -> Response:
        return JsonResponse(document())

    secrets = all_secrets(minds)
    routes: list[BaseRoute] = [_route(ep, minds, max_body, secrets, state) for ep in table]
    routes.append(Route("/openapi.json", openapi, methods=["GET"]))
    routes += [_body_limited(mount, max_body) for ext in extensions for mount in ext.mounts]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for ext in extensions:
                if ext.lifespan is not None:
                    await stack.enter_async_context(ext.lifespan())
            yield

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = "not_found" if exc.status_code == 404 else "bad_request"
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            code = "method_not_allowed"
            headers["Allow"] = allowed_methods(request.scope, routes, headers.get("Allow"))
        return error_response(
            exc.status_code, code, f"{request.method} {request.url.path}: {exc.detail}", headers
        )

    app = Starlette(
        routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error}
    )
    app.state.stopping = state.stopping
    app.state.minds = minds
    app.state.openapi = document  # the document, made on first use
    if cors:
        from mindledger.service.cors import MindCORS

        app.add_middleware(MindCORS, origins=cors)  # inside the request log: preflights logged
    app.add_middleware(ClientOrigin)  # whether a request's client is told the server's paths
    app.add_middleware(RequestLog, state=state)
    return app


def _body_limited(route: BaseRoute, limit: int) -> BaseRoute:
    """A mounted route whose app gets its body only within `--max-body` and the body's time
    (`service.body_limit`): those apps read their own bodies, past the endpoints' check."""
    from mindledger.service.body_limit import BodyLimit

    if isinstance(route, Route | Mount) and not isinstance(route.app, BodyLimit):
        route.app = BodyLimit(route.app, limit)
    return route


def allowed_methods(scope: Scope, routes: Sequence[BaseRoute], given: str | None) -> str:
    """The `Allow` of a 405: every method some route serves at the path (Starlette names only
    the first route's; one path has a route per method here), or `given`, or a static file's."""
    methods = {m.strip() for m in (given or "").split(",") if m.strip()}
    for route in routes:
        if isinstance(route, Route) and route.methods and route.matches(scope)[0] != Match.NONE:
            methods |= route.methods
    if not methods and isinstance(scope.get("endpoint"), StaticFiles):
        methods = {"GET", "HEAD"}  # StaticFiles raises its 405 without one
    return ", ".join(sorted(methods))


def served_routes(app: Starlette) -> list[tuple[str, str]]:
    """(method, path) of every endpoint route (for the test that checks the OpenAPI doc)."""
    pairs = []
    for route in app.routes:
        if isinstance(route, Route) and route.methods:
            pairs += [(m, route.path_format) for m in route.methods if m != "HEAD"]
    return pairs
