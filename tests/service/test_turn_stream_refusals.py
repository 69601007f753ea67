"""A streamed turn on the mind's own route (`POST /v1/minds/NAME/turns`, `"stream": true`) is
checked before its stream starts, as chat completions' is: a request the floor refuses (an empty
message, an unknown model, a setting out of range, `mock` without its script) is the 400 the
same request not streamed answers, in the one error shape naming its field, never a 200 with an
error event; the ledger is unchanged and still verifies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.minds import Minds

FIELDS = {"message", "type", "param", "code"}
REFUSED = [
    ({"text": ""}, "text"),
    ({"text": "hello", "model": "nosuch/model"}, "model"),
    ({"text": "hello", "sampling": {"temperature": 5}}, "sampling.temperature"),
    ({"text": "hello", "model": "mock"}, "mock_reply"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, str]]]:
    import mindledger

    home = tmp_path_factory.mktemp("stream400") / "mind"
    mindledger.init(home, name="Echo", now="2026-05-01T09:00:00Z")
    minds = Minds.open([Home(Path(home))])
    headers = {"Authorization": f"Bearer {next(iter(minds)).token}"}
    with TestClient(build_app(minds), raise_server_exceptions=False) as client:
        yield client, headers
    minds.close(10)


def head(client: TestClient, headers: dict[str, str]) -> Any:
    return client.get("/v1/minds/Echo/status", headers=headers).json()["head"]


@pytest.mark.parametrize(("body", "param"), REFUSED, ids=[p for _, p in REFUSED])
def test_a_streamed_turn_the_floor_refuses_is_a_400_before_any_stream(
    served: tuple[TestClient, dict[str, str]], body: dict[str, Any], param: str
) -> None:
    client, headers = served
    before = head(client, headers)

    streamed = client.post("/v1/minds/Echo/turns", json={**body, "stream": True}, headers=headers)
    plain = client.post("/v1/minds/Echo/turns", json=body, headers=headers)

    assert streamed.status_code == 400, streamed.text
    assert streamed.headers["content-type"].startswith("application/json")
    assert "event:" not in streamed.text
    error = streamed.json()["error"]
    assert set(error) == FIELDS and error["type"] == "invalid_request_error"
    assert error["param"] == param and "--" not in error["message"]
    assert (plain.status_code, plain.json()) == (400, streamed.json())
    assert head(client, headers) == before
    assert client.post("/v1/minds/Echo/verify", headers=headers).status_code == 200


def test_a_streamed_turn_that_passes_the_check_still_streams(
    served: tuple[TestClient, dict[str, str]],
) -> None:
    client, headers = served
    body = {"text": "hi", "model": "mock", "mock_reply": "Streamed.", "stream": True}

    reply = client.post("/v1/minds/Echo/turns", json=body, headers=headers)

    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    blocks = [b for b in reply.text.split("\n\n") if b.strip()]
    assert blocks[0].startswith("event: delta\n") and blocks[-1].startswith("event: turn\n")
