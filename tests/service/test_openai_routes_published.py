"""The OpenAI-compatible routes `/v1/completions`, `/v1/embeddings` and `/v1/responses` are
served as the others are: in the OpenAPI document (tagged openai, bearer token, their 200
schema, which real answers validate against), behind the token, and open to the pages
`--cors` names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # (via mcp)

from tests.service.openai_sdk import MOCK, Served, serve
from tests.service.test_openapi_results import ok_schemas

PAGE = "http://localhost:5173"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("/v1/completions", {"model": "mind/Echo", "prompt": "Say hello.", **MOCK}),
    ("/v1/embeddings", {"model": "mind/Echo", "input": ["Say hello."]}),
    ("/v1/embeddings", {"model": "mind/Echo", "input": "Hi.", "encoding_format": "base64"}),
    ("/v1/responses", {"model": "mind/Echo", "input": "Say hello.", **MOCK}),
]
PATHS = sorted({path for path, _ in CALLS})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory, cors=(PAGE,))


def test_each_route_is_documented_as_an_openai_route_behind_the_token(served: Served) -> None:
    document = served.client.get("/openapi.json").json()

    operations = [document["paths"][path]["post"] for path in PATHS]

    assert [op["tags"] for op in operations] == [["openai"]] * len(PATHS)
    assert all("security" not in op for op in operations)  # the document's default: bearer
    assert document["security"] == [{"bearer": []}]


def test_real_answers_validate_against_their_published_schema(served: Served) -> None:
    document = served.client.get("/openapi.json").json()
    answers = ok_schemas(document)
    invalid: dict[str, str] = {}

    for path, body in CALLS:
        answer = served.client.post(path, json=body, headers=served.auth)
        assert answer.status_code == 200, (path, answer.text)
        schema = {
            **answers[("POST", path)]["application/json"]["schema"],
            "components": document["components"],
        }
        errors = list(Draft202012Validator(schema).iter_errors(answer.json()))
        if errors:
            invalid[path] = errors[0].message

    assert invalid == {}


@pytest.mark.parametrize("path", PATHS)
def test_without_a_token_a_route_is_a_401_and_a_listed_page_may_ask(
    served: Served, path: str
) -> None:
    asked = {"Origin": PAGE, "Access-Control-Request-Method": "POST"}

    refused = served.client.post(path, json=dict(CALLS)[path], headers={"Origin": PAGE})
    preflight = served.client.options(path, headers=asked)

    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert refused.headers["access-control-allow-origin"] == PAGE
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == PAGE
