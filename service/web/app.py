"""The web page's Starlette app, mounted at `/` by `mind serve`: the page, its static files,
the one-time login exchange and the `/ui/api` reads the /v1 API does not offer.

Every `/ui/api` route takes the same bearer token as /v1 (one token opens one mind); the page
itself and its static files hold no data and need none.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from mindledger.compose import Home
from mindledger.domain.errors import MindError
from mindledger.service.auth import bearer as parse_bearer
from mindledger.service.errors import error_response, mind_error_response
from mindledger.service.web import views
from mindledger.service.web.login import LoginNonces
from mindledger.web_reads import WebReads, open_web_reads

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
    """The server's one error shape (`service/errors.py`), with the page's security headers
    (and a 401's challenge, as /v1 sends it)."""
    challenge = {"WWW-Authenticate": 'Bearer realm="mindledger"'} if status == 401 else {}
    return error_response(status, code, message, {**SECURITY_HEADERS, **challenge})


def bearer(request: Request) -> str | None:
    """The token of an `Authorization: Bearer` header (parsed as /v1 parses it)."""
    return parse_bearer(request.headers.get("authorization"))


# (the floor's reads for the request's mind, the request) -> the answer's data.
Reader = Callable[[WebReads, Request], Any]


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
                with open_web_reads(home) as reads:
                    return read(reads, request)

            try:
                data = await run_in_threadpool(run)
            except MindError as e:  # a bad filter or id: 4xx naming it, as /v1 answers
                return mind_error_response(e, [token], home.path)
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
        Route(f"{api}/turns", reading(views.turns)),
        Route(f"{api}/turns/{{turn}}", reading(views.turn)),
        Route(f"{api}/events", reading(views.events)),
        Route(f"{api}/commitments", reading(views.commitments)),
        Route(f"{api}/threads", reading(views.threads)),
        Route(f"{api}/concepts", reading(views.concepts)),
        Route(f"{api}/tension", reading(views.tension)),
        Route(f"{api}/concepts/{{token}}/versions", reading(views.concept_versions)),
        Route(f"{api}/features", reading(views.features)),
        Route(f"{api}/knowledge", reading(views.knowledge)),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
