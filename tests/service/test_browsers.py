"""Browsers and HTTP conventions, in-process over every route served (all the optional
extensions: the OpenAI routes, MCP, the web page): CORS only for the origins `--cors` names,
`Allow` on every 405, and the public routes, exactly those listed, answering without a token."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.errors import InvalidInputError
from mindledger.service.app import build_app
from mindledger.service.cors import check_origin
from mindledger.service.minds import Minds
from mindledger.service.public_routes import PUBLIC_ROUTES

PAGE = "http://localhost:5173"  # a page of another origin, as a browser names it
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


@pytest.fixture
def minds(mind_home: Path) -> Iterator[Minds]:
    opened = Minds.open([Home(mind_home)])
    yield opened
    opened.close(10)


def client_of(minds: Minds, cors: tuple[str, ...] = ()) -> TestClient:
    return TestClient(build_app(minds, cors=cors), raise_server_exceptions=False)


def auth(minds: Minds) -> dict[str, str]:
    return {"Authorization": f"Bearer {next(iter(minds)).token}"}


def concrete(template: str) -> str:
    """A path the route matches: the mind's name for `{name}`, a word for the others."""
    return re.sub(r"{(\w+)(?::\w+)?}", lambda m: "Echo" if m[1] == "name" else "x", template)


def every_route(client: TestClient) -> list[tuple[str, str, str]]:
    """(method, the route's path, a concrete path) for every method of every route served;
    a mount (the page's static files) by one file it serves."""
    found = []
    for route in client.app.routes:  # type: ignore[attr-defined]
        if isinstance(route, Route):
            methods = route.methods or {"GET", "POST"}  # MCP's routes take any method
            found += [(m, route.path, concrete(route.path)) for m in sorted(methods - {"HEAD"})]
        elif isinstance(route, Mount):
            found.append(("GET", route.path, f"{route.path}/app.js"))
    return found


def test_only_the_listed_public_routes_answer_without_a_token(minds: Minds) -> None:
    with client_of(minds) as client:
        routes = every_route(client)
        answered = {
            (method, path): client.request(method, url).status_code for method, path, url in routes
        }

    public = {route for route, status in answered.items() if status != 401}
    assert len(answered) >= 30  # every route: the API's, OpenAI's, MCP's, the page's
    assert public == set(PUBLIC_ROUTES)
    assert all(answered[route] < 500 for route in public)


def test_every_405_says_which_methods_the_path_allows(minds: Minds) -> None:
    with client_of(minds) as client:
        served: dict[str, set[str]] = {}
        for method, path, url in every_route(client):
            if not path.startswith("/mcp"):  # MCP's routes take every method and answer each
                served.setdefault(url, set()).add(method)
        answers = {
            (method, url): client.request(method, url, headers=auth(minds))
            for url, methods in served.items()
            for method in METHODS
            if method not in methods
        }

    assert len(answers) >= 100
    wrong = {
        f"{method} {url}": (answer.status_code, answer.headers.get("allow"))
        for (method, url), answer in answers.items()
        if answer.status_code != 405
        or set(answer.headers.get("allow", "").split(", ")) - {"HEAD"} != served[url]
        or answer.json()["error"]["code"] != "method_not_allowed"
    }
    assert wrong == {}


def test_without_cors_no_answer_carries_a_cors_header_and_a_preflight_is_a_405(
    minds: Minds,
) -> None:
    with client_of(minds) as client:
        preflight = client.options(
            "/v1/minds",
            headers={"Origin": PAGE, "Access-Control-Request-Method": "GET"},
        )
        listed = client.get("/v1/minds", headers={"Origin": PAGE, **auth(minds)})

    assert preflight.status_code == 405
    assert preflight.headers["allow"] == "GET, HEAD"
    assert listed.status_code == 200
    for answer in (preflight, listed):
        assert [h for h in answer.headers if h.lower().startswith("access-control-")] == []


def test_a_listed_origin_gets_its_preflight_answered_and_its_answers_readable(
    minds: Minds,
) -> None:
    with client_of(minds, cors=(PAGE,)) as client:
        preflight = client.options(
            "/v1/chat/completions",
            headers={
                "Origin": PAGE,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, x-stainless-os",
            },
        )
        listed = client.get("/v1/minds", headers={"Origin": PAGE, **auth(minds)})
        refused = client.get("/v1/minds", headers={"Origin": PAGE})

    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == PAGE
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert preflight.headers["access-control-allow-headers"] == (
        "authorization, content-type, x-stainless-os"
    )
    assert "access-control-allow-credentials" not in preflight.headers
    assert listed.status_code == 200
    assert listed.headers["access-control-allow-origin"] == PAGE
    exposed = {h.strip() for h in listed.headers["access-control-expose-headers"].split(",")}
    assert {"Mcp-Session-Id", "Retry-After", "Allow", "Idempotent-Replayed"} <= exposed
    # A 401 is readable too, so a page can tell a wrong token from a network failure.
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == PAGE


def test_an_origin_not_listed_gets_no_cors_header_and_a_refused_preflight(
    minds: Minds,
) -> None:
    other = "https://evil.example"
    with client_of(minds, cors=(PAGE,)) as client:
        preflight = client.options(
            "/v1/minds", headers={"Origin": other, "Access-Control-Request-Method": "GET"}
        )
        listed = client.get("/v1/minds", headers={"Origin": other, **auth(minds)})
        method = client.options(
            "/v1/minds", headers={"Origin": PAGE, "Access-Control-Request-Method": "PUT"}
        )

    assert preflight.status_code == 400
    assert preflight.json()["error"]["code"] == "cors_refused"
    assert "origin" in preflight.json()["error"]["message"]
    assert method.status_code == 400 and "method" in method.json()["error"]["message"]
    for answer in (preflight, method):
        assert [h for h in answer.headers if h.lower().startswith("access-control-")] == []
    # Starlette adds its expose list to any answer with an Origin; without an allowed origin
    # the browser shows the page nothing of it.
    assert listed.status_code == 200
    assert "access-control-allow-origin" not in listed.headers


@pytest.mark.parametrize(
    ("given_origin", "origin"),
    [
        ("http://localhost:5173", "http://localhost:5173"),
        ("HTTPS://Example.COM", "https://example.com"),
        ("https://example.com:443/", "https://example.com"),
        ("http://[::1]:8080", "http://[::1]:8080"),
    ],
)
def test_an_origin_is_kept_as_a_browser_sends_it(given_origin: str, origin: str) -> None:
    assert check_origin(given_origin) == origin


@pytest.mark.parametrize(
    "wrong",
    ["*", "localhost:5173", "http://localhost:5173/app", "ftp://example.com", "http://", "null"],
)
def test_a_malformed_origin_is_refused_in_one_line(wrong: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        check_origin(wrong)

    assert refused.value.args[0].startswith("--cors ")
    assert "\n" not in refused.value.args[0]


@given(st.text(max_size=60))
def test_any_text_is_an_origin_or_one_refusal_line(text: str) -> None:
    try:
        origin = check_origin(text)
    except InvalidInputError as e:
        assert "\n" not in str(e).replace("\\n", "")
        return
    assert re.fullmatch(r"https?://[^/?#@\s]+", origin)
    assert check_origin(origin) == origin
