"""A client's retries never record a second turn: the official openai client, with its default
retries, against the server in-process whose model is a loopback upstream that fails twice and
then answers, records one turn with three attempts and gets one reply; a repeat with an
`Idempotency-Key` is answered from the record and writes nothing; a failure retrying cannot fix
is a 4xx the client does not retry; a transient one is a 503 with Retry-After."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.minds import Minds
from tests.service.flaky_provider import flaky_provider

REPLY = "Third time lucky."
Served = tuple[TestClient, Minds, list[httpx.Request]]


@pytest.fixture
def served(mind_home: Path) -> Iterator[Served]:
    minds = Minds.open([Home(mind_home)])
    sent: list[httpx.Request] = []
    with TestClient(build_app(minds), raise_server_exceptions=False) as client:
        client.headers["Authorization"] = f"Bearer {next(iter(minds)).token}"
        client.event_hooks = {"request": [sent.append]}
        yield client, minds, sent
    minds.close(10)


def sdk(client: TestClient, minds: Minds) -> openai.OpenAI:
    """The official client with its defaults (two retries), over the in-process app."""
    return openai.OpenAI(
        base_url="http://testserver/v1", api_key=next(iter(minds)).token, http_client=client
    )


def turn_events(client: TestClient) -> list[tuple[str, dict[str, Any]]]:
    log = client.get("/v1/minds/Echo/log", params={"limit": 500}).json()
    turns = [e for e in log if e["type"].startswith("mind.turn.")]
    return [(e["type"].removeprefix("mind.turn."), e["payload"]) for e in turns]


def test_the_sdks_retries_of_a_failing_upstream_record_one_turn_with_three_attempts(
    served: Served,
) -> None:
    client, minds, sent = served

    with flaky_provider(REPLY, failures=2) as upstream:
        answer = sdk(client, minds).chat.completions.create(
            model="mind/Echo",
            messages=[{"role": "user", "content": "Are you there?"}],
            extra_body={"mind_options": {"model": "openai/flaky", "api_base": upstream.url}},
        )
        tries = [r.headers.get("x-stainless-retry-count") for r in sent]

    kinds = [kind for kind, _ in turn_events(client)]
    retried = [p["attempt"] for kind, p in turn_events(client) if kind == "retried"]
    rows = client.post("/v1/minds/Echo/query", json={"sql": "SELECT status FROM turns"}).json()
    assert answer.choices[0].message.content == REPLY
    assert upstream.asked == 3 and tries == ["0", "1", "2"]
    assert kinds.count("started") == 1 and kinds.count("completed") == 1
    assert kinds.count("generation_failed") == 2 and retried == [2, 3]
    assert rows == [{"status": "complete"}]
    assert client.post("/v1/minds/Echo/verify").json()["ok"] is True


def test_a_transient_failure_is_a_503_with_retry_after_and_a_keyed_repeat_attempts_it_again(
    served: Served,
) -> None:
    client, _, _ = served
    key = {"Idempotency-Key": "order-42"}

    with flaky_provider(REPLY, failures=1) as upstream:
        body = {"text": "Hello?", "model": "openai/flaky", "api_base": upstream.url}
        failed = client.post("/v1/minds/Echo/turns", json=body, headers=key)
        again = client.post("/v1/minds/Echo/turns", json=body, headers=key)

    error = failed.json()["error"]
    assert failed.status_code == 503 and failed.headers["retry-after"] == "1"
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "model_unavailable" and error["type"] == "server_error"
    assert failed.json()["mind_turn"]["status"] == "failed"
    assert again.status_code == 200 and again.json()["reply"] == REPLY
    assert again.json()["turn"] == failed.json()["mind_turn"]["turn"]  # the same turn
    assert [k for k, _ in turn_events(client)].count("started") == 1


def test_a_repeat_with_an_idempotency_key_is_answered_from_the_record_and_writes_nothing(
    served: Served,
) -> None:
    client, _, _ = served
    body = {
        "model": "mind/Echo",
        "messages": [{"role": "user", "content": "Remember the milk."}],
        "mind_options": {"model": "mock", "mock_reply": "Noted."},
    }
    key = {"Idempotency-Key": "milk-1"}
    first = client.post("/v1/chat/completions", json=body, headers=key)
    head = client.get("/v1/minds/Echo/status").json()["head"]

    repeat = client.post("/v1/chat/completions", json=body, headers=key)

    assert first.status_code == repeat.status_code == 200
    assert repeat.json()["mind_turn"] == first.json()["mind_turn"]
    assert repeat.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert client.get("/v1/minds/Echo/status").json()["head"] == head


def test_an_idempotency_key_sent_again_with_another_request_is_a_422_and_records_nothing(
    served: Served,
) -> None:
    client, _, _ = served
    key = {"Idempotency-Key": "same-key"}
    client.post("/v1/minds/Echo/turns", json={"text": "one", "mock_reply": "a"}, headers=key)
    head = client.get("/v1/minds/Echo/status").json()["head"]

    reused = client.post(
        "/v1/minds/Echo/turns", json={"text": "two", "mock_reply": "b"}, headers=key
    )

    assert reused.status_code == 422
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert reused.json()["error"]["param"] == "Idempotency-Key"
    assert client.get("/v1/minds/Echo/status").json()["head"] == head


@pytest.mark.parametrize(
    ("retry", "text", "new_turn"),
    [("1", "Same words.", False), ("0", "Same words.", True), ("1", "Other words.", True)],
    ids=["a-retry", "not-marked-as-a-retry", "another-body"],
)
def test_a_request_marked_as_a_retry_of_the_last_one_is_not_a_second_turn(
    served: Served, retry: str, text: str, new_turn: bool
) -> None:
    client, _, _ = served
    client.post("/v1/minds/Echo/turns", json={"text": "Same words.", "mock_reply": "Yes."})
    before = [k for k, _ in turn_events(client)].count("started")

    again = client.post(
        "/v1/minds/Echo/turns",
        json={"text": text, "mock_reply": "Yes."},
        headers={"x-stainless-retry-count": retry},
    )

    assert again.status_code == 200
    assert [k for k, _ in turn_events(client)].count("started") == before + new_turn


def test_an_unknown_model_is_a_4xx_the_sdk_does_not_retry(served: Served) -> None:
    client, minds, sent = served

    with pytest.raises(openai.NotFoundError) as unknown:
        sdk(client, minds).chat.completions.create(
            model="mind/Nobody", messages=[{"role": "user", "content": "hi"}]
        )

    assert len(sent) == 1 and unknown.value.code == "model_not_found"
    assert turn_events(client) == []


def test_a_model_the_upstream_does_not_know_is_a_400_tried_once(served: Served) -> None:
    client, minds, sent = served

    with (
        flaky_provider(REPLY, failures=1, status=404) as upstream,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        sdk(client, minds).chat.completions.create(
            model="mind/Echo",
            messages=[{"role": "user", "content": "hi"}],
            extra_body={"mind_options": {"model": "openai/nothing", "api_base": upstream.url}},
        )

    assert len(sent) == 1 and upstream.asked == 1
    assert refused.value.code == "model_refused_request"
    assert [k for k, _ in turn_events(client)] == ["started", "generation_failed"]


def test_a_streamed_repeat_is_answered_from_the_record_as_a_stream(served: Served) -> None:
    client, minds, _ = served
    options = {"mind_options": {"model": "mock", "mock_reply": "Streamed once."}}
    key = {"Idempotency-Key": "stream-1"}

    def streamed() -> str:
        chunks = sdk(client, minds).chat.completions.create(
            model="mind/Echo",
            messages=[{"role": "user", "content": "Stream it."}],
            stream=True,
            extra_body=options,
            extra_headers=key,
        )
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

    first = streamed()
    head = client.get("/v1/minds/Echo/status").json()["head"]
    again = streamed()

    assert first == again == "Streamed once."
    assert client.get("/v1/minds/Echo/status").json()["head"] == head


def test_a_failed_ask_is_the_one_error_with_the_ask_beside_it(served: Served) -> None:
    client, _, _ = served

    with flaky_provider(REPLY, failures=1) as upstream:
        body = {"question": "Is it up?", "model": "openai/flaky", "api_base": upstream.url}
        failed = client.post("/v1/minds/Echo/ask", json=body)

    assert failed.status_code == 503 and failed.headers["retry-after"] == "1"
    assert set(failed.json()) == {"error", "mind_ask"}
    assert failed.json()["error"]["code"] == "model_unavailable"
    assert failed.json()["mind_ask"]["failure"]["kind"] == "server"


def test_the_openapi_document_names_the_headers_a_turn_reads(served: Served) -> None:
    client, _, _ = served

    paths = client.get("/openapi.json").json()["paths"]

    for path in ("/v1/minds/{name}/turns", "/v1/chat/completions"):
        headers = [p["name"] for p in paths[path]["post"]["parameters"] if p["in"] == "header"]
        assert headers == ["Idempotency-Key", "x-stainless-retry-count"]
