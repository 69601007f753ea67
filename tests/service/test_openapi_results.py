"""The OpenAPI document publishes what every route answers with 200 (the floor's result
schemas, pydantic's JSON schema of each result), and real answers validate against it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # (via mcp)
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.minds import Minds
from mindledger.service.openai_api import extension

MIND = "/v1/minds/Echo"
TEMPLATE = "/v1/minds/{name}"  # the routes' paths as the document names them


@pytest.fixture
def served(mind_home: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    minds = Minds.open([Home(mind_home)])
    app = build_app(minds, extensions=[extension(minds)])
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, {"Authorization": f"Bearer {next(iter(minds)).token}"}
    minds.close(10)


def ok_schemas(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(METHOD, path) -> the content types and schemas of its 200 answer."""
    return {
        (method.upper(), path): op["responses"]["200"]["content"]
        for path, ops in document["paths"].items()
        for method, op in ops.items()
        if "200" in op["responses"]
    }


def test_every_route_with_a_200_publishes_its_schema(
    served: tuple[TestClient, dict[str, str]],
) -> None:
    client, _ = served

    document = client.get("/openapi.json").json()
    answers = ok_schemas(document)

    empty = sorted(
        f"{m} {p} {kind}"
        for (m, p), content in answers.items()
        for kind, media in content.items()
        if not media["schema"]
    )
    assert len(answers) >= 25 and empty == []
    assert (
        document["paths"][f"{TEMPLATE}/status"]["get"]["responses"]["200"]["content"][
            "application/json"
        ]["schema"]["title"]
        == "StatusResult"
    )
    assert "TurnResult" in str(answers[("POST", f"{TEMPLATE}/turns")])


# Real requests, each answered 200, checked against the schema the document gives its route.
CALLS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/healthz", None),
    ("GET", "/v1/minds", None),
    ("POST", f"{MIND}/turns", {"text": "Remind me to water the ferns", "mock_reply": "Noted."}),
    ("GET", f"{MIND}/recall?q=ferns", None),
    ("GET", f"{MIND}/commitments?all=true", None),
    ("GET", f"{MIND}/threads", None),
    ("GET", f"{MIND}/concepts", None),
    ("GET", f"{MIND}/identity", None),
    ("GET", f"{MIND}/status", None),
    ("GET", f"{MIND}/log?limit=5", None),
    ("GET", f"{MIND}/log?turn=last", None),
    ("POST", f"{MIND}/verify", None),
    ("POST", f"{MIND}/query", {"sql": "SELECT type, count(*) AS n FROM events GROUP BY type"}),
    ("POST", f"{MIND}/knowledge", {"text": "4471", "question": "What is the boiler code?"}),
    ("GET", f"{MIND}/knowledge", None),
    # On the scripted model: the item is unverified, so the ask goes to the model (the
    # mind's own would be the embedded one, seconds of CPU and a timeout on a loaded machine).
    (
        "POST",
        f"{MIND}/ask",
        {"question": "What is the boiler code?", "model": "mock", "mock_reply": "4471"},
    ),
    ("POST", f"{MIND}/forget", {"selector": "speaker", "value": "user", "dry_run": True}),
    ("GET", "/v1/models", None),
    (
        "POST",
        "/v1/chat/completions",
        {
            "model": "mind/Echo",
            "messages": [{"role": "user", "content": "Hello"}],
            "mind_options": {"model": "mock", "mock_reply": "Hi."},
        },
    ),
]


def test_real_answers_validate_against_their_published_schema(
    served: tuple[TestClient, dict[str, str]],
) -> None:
    client, auth = served
    document = client.get("/openapi.json").json()
    answers = ok_schemas(document)
    invalid: dict[str, str] = {}

    for method, url, body in CALLS:
        if body is not None and url.endswith("/turns"):
            body = {**body, "model": "mock"}
        answer = client.request(method, url, headers=auth, json=body)
        assert answer.status_code == 200, (url, answer.text)
        route = (method, url.split("?")[0].replace(MIND, TEMPLATE))
        schema = {
            **answers[route]["application/json"]["schema"],
            "components": document["components"],
        }
        errors = list(Draft202012Validator(schema).iter_errors(answer.json()))
        if errors:
            invalid[url] = errors[0].message

    assert invalid == {}
