"""One error shape, the right status, on every route: each route of the table (the /v1 API, the
OpenAI routes, the events stream, MCP), refused for a missing or wrong token (401), an unknown
mind (404), a method it does not serve (405) and a body that is not JSON (400), answers
`{"error": {"message", "type", "param", "code"}}` with one line naming the problem, the type
its status implies and request words, never a command-line flag. In-process: one app for all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.service.app import build_app, served_routes
from mindledger.service.minds import Minds

FIELDS = {"message", "type", "param", "code"}
# Routes that take no token: liveness, the document, the page, and the page's login (a
# one-time nonce is its credential).
PUBLIC = {"/healthz", "/openapi.json", "/", "/ui/login"}
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str]]:
    import mindledger

    home = tmp_path_factory.mktemp("shapes") / "mind"
    mindledger.init(home, name="Echo", now="2026-05-01T09:00:00Z")
    minds = Minds.open([Home(Path(home))])
    with TestClient(build_app(minds), raise_server_exceptions=False) as client:
        yield client, next(iter(minds)).token
    minds.close(10)


def _routes() -> list[tuple[str, str]]:
    """Every (method, path) the default app serves, read from a throwaway app's table."""
    from unittest import mock

    minds = mock.MagicMock(spec=Minds)
    minds.__iter__.return_value = iter([])
    app = build_app(minds)
    return sorted(p for p in served_routes(app) if p[1] not in PUBLIC)


ROUTES = _routes()


def url(path: str, name: str = "Echo") -> str:
    return path.replace("{name}", name).replace("{ref}", "abc").replace("{turn}", "abc")


def assert_one_shape(reply: Any, status: int) -> dict[str, Any]:
    body = reply.json()
    error = body["error"]
    kind = {401: "authentication_error", 403: "permission_error"}.get(
        status, "invalid_request_error" if status < 500 else "server_error"
    )
    assert reply.status_code == status, body
    assert set(error) == FIELDS and error["type"] == kind
    assert error["message"] and "\n" not in error["message"] and "--" not in error["message"]
    assert isinstance(error["code"], str) and error["code"]
    return dict(error)


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_every_route_refuses_a_missing_or_wrong_token_with_401_in_the_one_shape(
    served: tuple[TestClient, str], method: str, path: str
) -> None:
    client, _ = served

    missing = client.request(method, url(path))
    wrong = client.request(method, url(path), headers={"Authorization": "Bearer nope"})

    for reply in (missing, wrong):
        assert assert_one_shape(reply, 401)["code"] == "unauthorized"
        assert reply.headers["www-authenticate"].startswith("Bearer")


# The page's reads answer a mind the token does not open as 401 (service/web/app.py), as
# they answer a wrong token; the API's routes name it an unknown mind.
NAMED = [(m, p) for m, p in ROUTES if "{name}" in p and not p.startswith("/ui/")]


@pytest.mark.parametrize(("method", "path"), NAMED, ids=[f"{m} {p}" for m, p in NAMED])
def test_every_route_of_a_mind_answers_an_unknown_mind_with_404_in_the_one_shape(
    served: tuple[TestClient, str], method: str, path: str
) -> None:
    client, token = served

    reply = client.request(
        method, url(path, "Nobody"), headers={"Authorization": f"Bearer {token}"}, json={}
    )

    assert assert_one_shape(reply, 404)["code"] == "unknown_mind"


PATHS = sorted({p for _, p in ROUTES})


@pytest.mark.parametrize("path", PATHS)
def test_every_path_answers_a_method_it_does_not_serve_with_405_and_allow(
    served: tuple[TestClient, str], path: str
) -> None:
    client, token = served
    served_here = {m for m, p in ROUTES if p == path}
    other = next(m for m in METHODS if m not in served_here)

    reply = client.request(other, url(path), headers={"Authorization": f"Bearer {token}"})

    assert assert_one_shape(reply, 405)["code"] == "method_not_allowed"
    assert served_here <= {m.strip() for m in reply.headers["allow"].split(",")}


def _with_bodies() -> list[tuple[str, str]]:
    """The routes that read a JSON body: those the table gives one, and the OpenAI chat."""
    from mindledger.service.http_api import endpoints

    table = [(ep.method, ep.path) for ep in endpoints() if ep.body is not None]
    return sorted([*table, ("POST", "/v1/chat/completions")])


BODIES = _with_bodies()


@pytest.mark.parametrize(("method", "path"), BODIES, ids=[f"{m} {p}" for m, p in BODIES])
def test_every_route_with_a_body_answers_one_that_is_not_json_with_400(
    served: tuple[TestClient, str], method: str, path: str
) -> None:
    client, token = served
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    reply = client.request(method, url(path), headers=headers, content=b"{not json")

    assert assert_one_shape(reply, 400)["code"] in ("bad_json", "bad_request")


def test_an_unknown_path_is_a_404_in_the_one_shape(served: tuple[TestClient, str]) -> None:
    client, token = served

    reply = client.get("/v1/nothing-here", headers={"Authorization": f"Bearer {token}"})

    assert assert_one_shape(reply, 404)["code"] == "not_found"


@pytest.mark.parametrize("path", ["/mcp", "/mcp/Echo"])
def test_mcp_refuses_a_missing_token_and_an_unknown_mind_in_the_one_shape(
    served: tuple[TestClient, str], path: str
) -> None:
    client, token = served

    missing = client.post(path, json={})
    unknown = client.post("/mcp/Nobody", json={}, headers={"Authorization": f"Bearer {token}"})

    assert assert_one_shape(missing, 401)["code"] == "unauthorized"
    assert assert_one_shape(unknown, 404)["code"] == "unknown_mind"


def test_a_ledger_that_fails_verification_is_a_409_with_the_result_beside_it(
    tmp_path: Path,
) -> None:
    import sqlite3

    import mindledger

    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now="2026-05-01T09:00:00Z")
    with mindledger.open(home, now="2026-05-01T09:00:00Z") as mind:
        mind.commit("Promise one")
    with sqlite3.connect(home / "ledger.sqlite") as con:  # a clear field changed
        con.execute(
            'UPDATE stored_events SET state = replace(state, \'"origin":"owner"\', '
            "'\"origin\":\"model\"') WHERE topic = 'mind.commitment.opened'"
        )
    minds = Minds.open([Home(home)])
    headers = {"Authorization": f"Bearer {next(iter(minds)).token}"}

    with TestClient(build_app(minds), raise_server_exceptions=False) as client:
        reply = client.post("/v1/minds/Echo/verify", headers=headers)
    minds.close(10)

    error = assert_one_shape(reply, 409)
    assert error["code"] == "verify_failed" and "payload changed" in error["message"]
    assert reply.json()["mind_verify"]["ok"] is False


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/minds/Echo/turns", {"text": "hi"}, "model"),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}, None),
        ("/v1/completions", {"prompt": "hi"}, None),
        ("/v1/responses", {"input": "hi"}, None),
    ],
)
def test_a_model_no_provider_serves_is_a_400_naming_the_field_that_chose_it(
    served: tuple[TestClient, str], path: str, body: dict[str, Any], param: str | None
) -> None:
    client, token = served
    spec = "nosuchprovider/xyz"
    chosen = {"model": spec} if param else {"model": "mind/Echo", "mind_options": {"model": spec}}

    bearer = {"Authorization": f"Bearer {token}"}
    answer = client.post(path, headers=bearer, json={**body, **chosen})

    error = answer.json()["error"]
    assert answer.status_code == 400, answer.text
    assert error["param"] == (param or "mind_options.model")
    assert error["message"].startswith(f"LiteLLM cannot route model {spec!r}")
