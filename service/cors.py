"""Browsers: CORS for the origins `mind serve --cors ORIGIN` names, and none by default.

Starlette's `CORSMiddleware` (as installed, 1.x) does the work: a preflight (OPTIONS with
`Origin` and `Access-Control-Request-Method`) is answered by it, before any route or token
check, with the origin echoed when it is listed and the methods, headers and max age allowed;
any other answer to a listed origin gains `Access-Control-Allow-Origin` (a 401 too, so a page
can tell a wrong token from a network failure); every answer to a request with an `Origin`
gains `Vary: Origin` and the exposed headers' list, which without an allowed origin a browser
keeps from the page. Two things are ours: each origin is checked at start-up in the form a browser
sends it (a trailing slash or a path would never match), and a refused preflight is the one
error shape instead of the middleware's plain text. No credentials mode: the token travels in
the `Authorization` header, which a page sends only once it holds the token, never in a cookie
a browser adds by itself; a wildcard origin is refused (name each site you trust).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp

from mindledger.errors import InvalidInputError
from mindledger.service.errors import error_response

# The methods a browser may send: the API's, and MCP's streamable HTTP (GET, POST, DELETE).
METHODS = ("GET", "POST", "DELETE")
# Headers a browser client may read: MCP's session, why a request was refused or delayed, the
# methods a 405's path takes, and that an answer came from the record of an earlier attempt.
EXPOSED = ("Mcp-Session-Id", "Retry-After", "WWW-Authenticate", "Allow", "Idempotent-Replayed")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def check_origin(text: str) -> str:
    """`text` as a browser writes it in `Origin` (`scheme://host[:port]`, lower case, no
    default port); one line naming the fix for anything else."""
    shape = "an origin is scheme://host[:port] as a browser sends it, e.g. http://localhost:5173"
    if text.strip() == "*":
        raise InvalidInputError(
            "--cors '*': name each origin to allow (any web page could call the server with a "
            "token it was given)"
        )
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        raise InvalidInputError(f"--cors {text!r}: {shape}") from None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if (
        scheme not in _DEFAULT_PORTS
        or not host
        or parts.username is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or not host.isascii()
    ):
        raise InvalidInputError(f"--cors {text!r}: {shape}")
    shown = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        shown += f":{port}"
    return f"{scheme}://{shown}"


def check_origins(origins: Sequence[str]) -> list[str]:
    """Each of `origins` checked (`check_origin`), each once."""
    return list(dict.fromkeys(check_origin(o) for o in origins))


class MindCORS(CORSMiddleware):
    """Starlette's CORS for the listed origins, a refused preflight in the one error shape."""

    def __init__(self, app: ASGIApp, origins: Sequence[str]) -> None:
        super().__init__(
            app,
            allow_origins=list(origins),
            allow_methods=METHODS,
            allow_headers=["*"],  # mirrored back: Authorization, Content-Type, the SDKs' own
            expose_headers=EXPOSED,
        )

    def preflight_response(self, request_headers: Headers) -> Response:
        """The middleware's answer; a refusal as the one error shape, with no CORS header."""
        answer = super().preflight_response(request_headers)
        if answer.status_code == 200:
            return answer
        refused = bytes(answer.body).decode().removeprefix("Disallowed CORS ")
        return error_response(
            400,
            "cors_refused",
            f"CORS preflight refused: this server does not allow that {refused} "
            "(the server's owner lists the origins it allows)",
            {"Vary": "Origin"},
        )
