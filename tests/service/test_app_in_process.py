"""The application in-process (Starlette's test client): the OpenAPI document covers every
route served, extensions plug in, unexpected failures and odd input stay one-line JSON."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import PersistenceError
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import ClientDisconnect
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route, Router
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.domain.budgets import MAX_BUDGET
from mindledger.service.app import Extension, build_app, require_token, served_routes
from mindledger.service.bodies import TurnBody
from mindledger.service.body_check import check_body
from mindledger.service.endpoints import Call, Endpoint, Param
from mindledger.service.errors import ApiError
from mindledger.service.minds import Minds
from tests.e2e.test_mcp_early_initialize import initialize as initialize_request


async def explode(call: Call) -> Any:
    raise RuntimeError("the disk caught fire sk-test-secret-123")


async def leave(call: Call) -> Any:
    raise ClientDisconnect()


async def plain(request: Any) -> PlainTextResponse:
    return PlainTextResponse(f"opened {[m.name for m in request.scope['mind.opened']]}")


@pytest.fixture
def served(mind_home: Path) -> Iterator[tuple[TestClient, Minds]]:
    minds = Minds.open([Home(mind_home)])
    extra = Extension(
        endpoints=[
            Endpoint("GET", "/v1/explode", explode, "Always fails."),
            Endpoint("GET", "/v1/leave", leave, "The client always leaves."),
        ],
        mounts=[Mount("/plain", app=require_token(Router([Route("/", plain)]), minds))],
    )
    app = build_app(minds, extensions=[extra])
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, minds
    minds.close(10)


def auth(minds: Minds) -> dict[str, str]:
    return {"Authorization": f"Bearer {next(iter(minds)).token}"}


def test_every_route_served_is_in_the_openapi_document(
    served: tuple[TestClient, Minds],
) -> None:
    client, _ = served

    document = client.get("/openapi.json").json()

    documented = {(m.upper(), p) for p, ops in document["paths"].items() for m in ops}
    # Mounted sub-apps (here /plain; /mcp, the web page) are not endpoints: not listed.
    routes = {pair for pair in served_routes(client.app) if pair[1] != "/openapi.json"}  # type: ignore[arg-type]
    assert routes == documented
    assert ("GET", "/v1/explode") in documented


def test_an_unexpected_failure_is_a_json_500_without_details_and_logged_redacted(
    served: tuple[TestClient, Minds], caplog: pytest.LogCaptureFixture
) -> None:
    client, minds = served
    logging.getLogger("mindledger.server").propagate = True

    with caplog.at_level(logging.ERROR, logger="mindledger.server"):
        answer = client.get("/v1/explode", headers=auth(minds))

    assert answer.status_code == 500
    error = answer.json()["error"]
    message = re.fullmatch(
        r"the server failed to answer \(error id ([0-9a-f]{6}); details in the mind's "
        r"logs/errors.log\)",
        error["message"],
    )
    assert message is not None, error
    assert (error["type"], error["param"], error["code"]) == ("server_error", None, "internal")
    assert "disk caught fire" in caplog.text
    assert "sk-test-secret-123" not in caplog.text
    kept = (next(iter(minds)).home.path / "logs" / "errors.log").read_text()
    assert f"error {message.group(1)}\nTraceback" in kept and "disk caught fire" in kept
    assert "sk-test-secret-123" not in kept


def test_a_client_that_leaves_before_its_request_is_read_is_no_error(
    served: tuple[TestClient, Minds], caplog: pytest.LogCaptureFixture
) -> None:
    client, minds = served
    logging.getLogger("mindledger.server").propagate = True

    with caplog.at_level(logging.INFO, logger="mindledger.server"):
        answer = client.get("/v1/leave", headers=auth(minds))

    assert answer.status_code == 499
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "the client went away" in caplog.text


def test_a_mounted_app_behind_require_token_sees_the_minds_the_token_opens(
    served: tuple[TestClient, Minds],
) -> None:
    client, minds = served

    refused = client.get("/plain/")
    opened = client.get("/plain/", headers=auth(minds))

    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "unauthorized")
    assert (opened.status_code, opened.text) == (200, "opened ['Echo']")


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([10**4299, -(10**300), 2**63])
    | st.floats()
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


FIELD = st.sampled_from(["text", "budget", "sampling", "x"])
SAMPLING = st.dictionaries(st.sampled_from(["temperature", "seed", "stop", "y"]), JSON, max_size=3)


@given(JSON | st.dictionaries(FIELD, JSON | SAMPLING, max_size=4))
def test_any_json_body_is_accepted_as_typed_or_refused_with_a_400_naming_the_field(
    data: Any,
) -> None:
    try:
        checked = check_body(data, TurnBody)
    except ApiError as e:
        assert e.status == 400 and e.message and "\n" not in e.message and len(e.message) < 300
        named = None if e.param is None else e.param.split(".")[0].split("[")[0]
        assert named is None or {e.param, named} & {*data, *TurnBody.model_fields}
        return
    assert isinstance(checked["text"], str)
    assert 200 <= checked.get("budget", 200) <= MAX_BUDGET


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        (
            {"text": "hi", "sampling": {"temperature": 5}},
            "sampling.temperature",
            "'sampling.temperature' is 5; it must be at most 2",
        ),
        ({"text": "hi", "budget": 10**4000}, "budget", "it must be at most 100000000"),
        ({"text": "hi", "sampling": {"stop": ["", "x"]}}, "sampling.stop[0]", "must not be empty"),
        ({"text": "hi", "sampling": {"warmth": 1}}, "sampling.warmth", "allowed: temperature"),
        ({"text": 1}, "text", "field 'text' must be a JSON string"),
        ({"budget": 300}, "text", "field 'text' is required"),
    ],
)
def test_a_refused_field_is_named_by_its_path_in_the_request(
    body: dict[str, Any], param: str, message: str
) -> None:
    with pytest.raises(ApiError) as refused:
        check_body(body, TurnBody)

    assert (refused.value.status, refused.value.param) == (400, param)
    assert message in refused.value.message


@given(st.binary(max_size=64))
def test_any_bytes_as_a_query_body_answer_json(raw: bytes) -> None:
    # One app for all examples would need a home per example; the body check runs before the
    # mind is used, so an app over no minds answers the same for a bad token/body.
    app = build_app(Minds([]), extensions=[])
    client = TestClient(app, raise_server_exceptions=False)

    answer = client.post("/v1/minds/Echo/query", content=raw, headers={"Authorization": "Bearer x"})

    assert answer.status_code == 401
    assert json.loads(answer.text)["error"]["code"] == "unauthorized"


def test_a_chunked_body_over_the_limit_is_refused_without_a_length_header(
    served: tuple[TestClient, Minds],
) -> None:
    client, minds = served

    def chunks() -> Iterator[bytes]:
        for _ in range(20):
            yield b" " * 65536

    answer = client.post("/v1/minds/Echo/query", content=chunks(), headers=auth(minds))

    assert (answer.status_code, answer.json()["error"]["code"]) == (413, "too_large")


def test_query_parameters_are_checked_by_type_and_range() -> None:
    from starlette.requests import Request

    from mindledger.service.endpoints import check_params

    params = (Param("limit", "integer", minimum=1, maximum=10), Param("all", "boolean"))

    def parse(query: str) -> Any:
        scope = {"type": "http", "query_string": query.encode(), "headers": []}
        return check_params(Request(scope), params, False)

    assert parse("limit=3&all=true") == {"limit": 3, "all": True}
    for bad in (
        "limit=11",
        "limit=x",
        "all=maybe",
        "other=1",
        "limit=1&limit=2",
        "limit=" + "9" * 30,
    ):
        with pytest.raises(ApiError):
            parse(bad)


def test_a_body_that_stalls_part_way_is_refused_408_instead_of_held_for_ever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from starlette.requests import Request

    from mindledger.service import endpoints
    from mindledger.service.endpoints import read_json

    sent = [{"type": "http.request", "body": b'{"text": "hal', "more_body": True}]

    async def receive() -> dict[str, Any]:
        if sent:
            return sent.pop()
        await asyncio.Event().wait()  # the rest never comes
        raise AssertionError("unreachable")

    scope = {"type": "http", "method": "POST", "path": "/", "headers": [], "query_string": b""}
    monkeypatch.setattr(endpoints, "BODY_TIMEOUT_S", 0.01)

    with pytest.raises(ApiError) as refused:
        asyncio.run(read_json(Request(scope, receive), 1024))

    assert (refused.value.status, refused.value.code) == (408, "body_timeout")


def test_a_mock_turn_without_its_reply_is_refused_in_the_requests_words(
    served: tuple[TestClient, Minds],
) -> None:
    client, minds = served
    name = next(iter(minds)).name

    answer = client.post(
        f"/v1/minds/{name}/turns", json={"text": "hi", "model": "mock"}, headers=auth(minds)
    )

    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == (
        'model "mock" needs "mock_reply" (the reply text to script)'
    )


@pytest.mark.parametrize("path", ["/v1/minds/Echo/query", "/v1/chat/completions"])
def test_every_body_reader_keeps_the_server_s_body_limit(mind_home: Path, path: str) -> None:
    from mindledger.service.openai_api import extension

    minds = Minds.open([Home(mind_home)])
    app = build_app(minds, extensions=[extension(minds)], max_body=200)
    body = {"model": "mind/Echo", "sql": "SELECT 1", "messages": [{"role": "user", "content": ""}]}
    body["messages"][0]["content"] = "x" * 300  # type: ignore[index]
    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.post(path, json=body, headers=auth(minds))
    minds.close(10)

    assert answer.status_code == 413
    assert "200 bytes" in json.dumps(answer.json())


def test_a_bad_field_is_named_in_the_error_param(served: tuple[TestClient, Minds]) -> None:
    client, minds = served

    answer = client.post(
        "/v1/minds/Echo/turns", headers=auth(minds), json={"text": "hi", "budget": "lots"}
    )

    assert answer.status_code == 400
    assert answer.json()["error"] == {
        "message": "field 'budget' must be a JSON integer",
        "type": "invalid_request_error",
        "param": "budget",
        "code": "bad_request",
    }


def test_a_floor_refusal_names_its_argument_as_the_error_param(
    served: tuple[TestClient, Minds],
) -> None:
    client, minds = served

    answer = client.post(
        "/v1/minds/Echo/forget",
        headers=auth(minds),
        json={"selector": "before", "value": "2999-01-01T00:00:00Z", "dry_run": True},
    )

    error = answer.json()["error"]
    assert answer.status_code == 400
    assert (error["param"], error["code"]) == ("value", "bad_request")
    assert error["message"].startswith("`before` 2999-01-01T00:00:00Z is in the future")
    assert "--" not in error["message"]


def _disk_full_app(mind_home: Path, failure: BaseException) -> tuple[TestClient, Minds]:
    async def fail(call: Call) -> Any:
        raise failure

    minds = Minds.open([Home(mind_home)])
    extra = Extension(endpoints=[Endpoint("GET", "/v1/full", fail, "Always out of room.")])
    return TestClient(build_app(minds, extensions=[extra]), raise_server_exceptions=False), minds


@pytest.mark.parametrize(
    "failure",
    [
        OSError(28, "No space left on device"),
        PersistenceError("database or disk is full"),
    ],
    ids=["enospc", "sqlite-full"],
)
def test_a_full_disk_is_answered_507_with_the_line_that_says_so(
    mind_home: Path, failure: BaseException
) -> None:
    client, minds = _disk_full_app(mind_home, failure)

    try:
        with client:
            response = client.get("/v1/full", headers=auth(minds))
    finally:
        minds.close(10)

    assert response.status_code == 507
    error = response.json()["error"]
    assert error["code"] == "insufficient_storage"
    # The home named as a remote client knows it, not by the server's path.
    assert error["message"].startswith("no space left to write in the mind's home (the disk is")
    assert error["message"].endswith("free some space, then run the command again")
    assert str(mind_home) not in error["message"]


def test_a_mounted_app_keeps_the_server_s_body_limit(mind_home: Path) -> None:
    """MCP's routes are mounted as they are and read their own bodies: any size reached the SDK."""
    from mindledger.service.mcp_server import extension

    minds = Minds.open([Home(mind_home)])
    app = build_app(minds, extensions=[extension(minds)], max_body=400)
    headers = {**auth(minds), "Accept": "application/json, text/event-stream"}
    initialize = initialize_request(1)  # the MCP handshake a client sends first
    over = {**initialize, "params": {**initialize["params"], "padding": "x" * 500}}

    def chunked() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield json.dumps(over).encode()[:300]
        yield json.dumps(over).encode()[300:]

    with TestClient(app, raise_server_exceptions=False) as client:
        declared = client.post("/mcp/Echo", json=over, headers=headers)
        streamed = client.post("/mcp/Echo", content=chunked(), headers=headers)
        within = client.post("/mcp/Echo", json=initialize, headers=headers)
    minds.close(10)

    for answer in (declared, streamed):
        assert answer.status_code == 413
        assert answer.json()["error"]["message"] == "the body is over the limit of 400 bytes"
    assert within.status_code == 200, within.text


def test_a_lone_surrogate_in_a_turns_text_is_a_400_naming_the_field(
    served: tuple[TestClient, Minds],
) -> None:
    # It read "attempt_turn: a text holds a lone surrogate ...; decode it with
    # errors='replace' first" with no param: the floor's method name and Python advice.
    client, minds = served
    name = next(iter(minds)).name
    body = '{"text": "\\ud800", "model": "mock", "mock_reply": "x"}'

    answer = client.post(
        f"/v1/minds/{name}/turns",
        content=body,
        headers={**auth(minds), "Content-Type": "application/json"},
    )

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == "text" and "`text` holds a lone surrogate" in error["message"]
    assert "attempt_turn" not in error["message"] and "errors=" not in error["message"]
