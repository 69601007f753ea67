"""The web page's Starlette app, mounted at `/` by `mind serve`: the page, its static files,
the one-time login exchange and the `/ui/api` reads the /v1 API does not offer.

Every `/ui/api` route takes the same bearer token as /v1 (one token opens one mind); the page
itself and its static files hold no data and need none.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from importlib import resources
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from mindledger.compose import Home, clock_from_env, read_model
from mindledger.domain.errors import InvalidInputError, MindError
from mindledger.service.auth import bearer as parse_bearer
from mindledger.service.errors import error_response, mind_error_response
from mindledger.service.web import views
from mindledger.service.web.login import LoginNonces
from mindledger.service.web.opening import Opener, home_opener

# No inline script or style anywhere: a stored `<script>` that slipped into the page could not
# run, and nothing is fetched from another origin (the page works offline).
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
STATIC = resources.files("mindledger.service.web") / "static"


class MindTokens(Protocol):
    """Which mind a bearer token opens (the server's own check, shared with /v1)."""

    def home_for(self, name: str, token: str) -> Home | None:
        """The home of mind `name` when `token` opens it, else None."""
        ...


def error(status: int, code: str, message: str) -> JSONResponse:
    """The server's one error shape: {"error": {"code", "message"}}."""
    return error_response(status, code, message, SECURITY_HEADERS)


def bearer(request: Request) -> str | None:
    """The token of an `Authorization: Bearer` header (parsed as /v1 parses it)."""
    return parse_bearer(request.headers.get("authorization"))


# (read-model connection, request, the opener of sealed payloads) -> the answer's data.
Reader = Callable[[Any, Request, Opener], Any]


def web_app(tokens: MindTokens, nonces: LoginNonces | None = None) -> Starlette:
    """The page's routes as an app of their own (tests; a server adds `web_routes`)."""
    return Starlette(routes=web_routes(tokens, nonces))


def web_routes(tokens: MindTokens, nonces: LoginNonces | None = None) -> list[BaseRoute]:
    """The page at `/`, `/static/*`, `POST /ui/login`, `POST /ui/api/minds/{name}/login-link`
    and the `/ui/api/minds/{name}/...` reads. Plain routes, not a mount at `/`: a path none of
    them serves stays the server's own 404."""
    nonces = nonces or LoginNonces()

    def reading(read: Reader) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            name = request.path_params["name"]
            token = bearer(request)
            if token is None:
                return error(401, "unauthorized", "send Authorization: Bearer <token>")
            home = tokens.home_for(name, token)
            if home is None:
                return error(401, "unauthorized", f"this token does not open mind {name!r}")

            def run() -> Any:
                with read_model(home) as con, home_opener(home) as opened:
                    return read(con, request, opened)

            try:
                data = await run_in_threadpool(run)
            except MindError as e:  # a bad filter or id: 4xx naming it, as /v1 answers
                return mind_error_response(e, [token])
            return JSONResponse(data, headers=SECURITY_HEADERS)

        return endpoint

    async def page(request: Request) -> Response:
        html = (STATIC / "index.html").read_text(encoding="utf-8")
        return Response(html, media_type="text/html; charset=utf-8", headers=SECURITY_HEADERS)

    async def login(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return error(400, "bad_json", 'send {"nonce": "..."}')
        nonce = body.get("nonce") if isinstance(body, dict) else None
        found = nonces.redeem(nonce) if isinstance(nonce, str) else None
        if found is None:
            return error(401, "unauthorized", "this login link was used or has expired")
        return JSONResponse({"mind": found[0], "token": found[1]}, headers=SECURITY_HEADERS)

    async def login_link(request: Request) -> Response:
        name, token = request.path_params["name"], bearer(request)
        if token is None or tokens.home_for(name, token) is None:
            return error(401, "unauthorized", f"this token does not open mind {name!r}")
        nonce = nonces.issue(name, token)
        return JSONResponse({"nonce": nonce, "path": f"/#login={nonce}"}, headers=SECURITY_HEADERS)

    api = "/ui/api/minds/{name}"
    return [
        Route("/", page),
        Route("/ui/login", login, methods=["POST"]),
        Route(f"{api}/login-link", login_link, methods=["POST"]),
        Route(f"{api}/turns", reading(_turns)),
        Route(f"{api}/turns/{{turn}}", reading(_turn)),
        Route(f"{api}/events", reading(_events)),
        Route(f"{api}/commitments", reading(_commitments)),
        Route(f"{api}/threads", reading(_threads)),
        Route(f"{api}/concepts", reading(_concepts)),
        Route(f"{api}/tension", reading(_tension)),
        Route(f"{api}/concepts/{{token}}/versions", reading(_versions)),
        Route(f"{api}/features", reading(_features)),
        Route(f"{api}/knowledge", reading(_knowledge)),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]


def _int(request: Request, key: str, default: int | None, low: int = 1) -> int | None:
    value = request.query_params.get(key)
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except ValueError:
        raise InvalidInputError(f"{key} must be a whole number, not {value!r}") from None
    if number < low:
        raise InvalidInputError(f"{key} must be at least {low}")
    return number


def _time(request: Request, key: str) -> datetime | None:
    value = request.query_params.get(key)
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"{key} must be an ISO time, not {value!r}") from None


def _turns(con: Any, request: Request, opened: Opener) -> Any:
    limit = min(_int(request, "limit", 20) or 20, 200)
    return views.turns(con, limit, _int(request, "before", None))


def _turn(con: Any, request: Request, opened: Opener) -> Any:
    return views.turn_detail(con, request.path_params["turn"], opened)


def _events(con: Any, request: Request, opened: Opener) -> Any:
    q = request.query_params
    return views.events(
        con,
        opened,
        kind=q.get("kind") or None,
        aggregate=q.get("aggregate") or None,
        since=_time(request, "since"),
        until=_time(request, "until"),
        search=q.get("q") or None,
        before=_int(request, "before", None),
        limit=_int(request, "limit", 100) or 100,
    )


def _commitments(con: Any, request: Request, opened: Opener) -> Any:
    limit = min(_int(request, "limit", 200) or 200, 1000)
    return views.commitments(con, request.query_params.get("status", "open"), limit)


def _threads(con: Any, request: Request, opened: Opener) -> Any:
    limit = min(_int(request, "limit", 100) or 100, 1000)
    include = request.query_params.get("all") in ("1", "true")
    return views.threads(con, clock_from_env()(), include, limit)


def _concepts(con: Any, request: Request, opened: Opener) -> Any:
    limit = min(_int(request, "limit", 200) or 200, 2000)
    return views.concepts(con, limit, min(_int(request, "edges", 300) or 300, 2000))


def _tension(con: Any, request: Request, opened: Opener) -> Any:
    streams = [s for s in request.query_params.getlist("thread") if s][:100]
    return views.tension_curves(con, streams, clock_from_env()())


def _versions(con: Any, request: Request, opened: Opener) -> Any:
    return views.concept_versions(con, request.path_params["token"], opened)


def _features(con: Any, request: Request, opened: Opener) -> Any:
    return {"knowledge": bool(views.knowledge_tables(con))}


def _knowledge(con: Any, request: Request, opened: Opener) -> Any:
    return views.knowledge(con)
