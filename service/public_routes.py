"""The routes that answer without a token, and why each may. Every other route needs a mind's
bearer token (401 without one); tests/service/test_browsers.py walks every route served and
checks that these, and only these, answer without one. A CORS preflight (OPTIONS from an
origin `mind serve --cors` names) is answered before any route, without a token too: it says
only which methods and headers that origin may send.
"""

from __future__ import annotations

# (method, path as the route declares it) -> why it needs no token. HEAD goes with GET.
PUBLIC_ROUTES: dict[tuple[str, str], str] = {
    ("GET", "/healthz"): "liveness for supervisors and load balancers; says only that it answers",
    ("GET", "/openapi.json"): "the API's description (routes and schemas); no mind's data",
    ("GET", "/"): "the web page; it holds no data and asks for a token before any read",
    ("GET", "/static"): "the page's script and style (every file under /static), the same for all",
    ("POST", "/ui/login"): "a one-time login link's exchange: the link's nonce is the credential",
}
