"""`/v1/chat/completions` from a stateless client: each request carries the growing
conversation; what the mind never saw is observed once, its own turns are not recorded again
(decision 0020)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import mindledger
from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.minds import Minds


@pytest.fixture
def served(mind_home: Path) -> Iterator[tuple[TestClient, Minds]]:
    minds = Minds.open([Home(mind_home)])
    with TestClient(build_app(minds), raise_server_exceptions=False) as client:
        yield client, minds
    minds.close(10)


def test_three_requests_with_the_growing_history_record_each_message_once(
    served: tuple[TestClient, Minds], mind_home: Path
) -> None:
    client, minds = served
    headers = {"Authorization": f"Bearer {next(iter(minds)).token}"}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Earlier, elsewhere: my cat is called Pimiento."},
        {"role": "assistant", "content": "A spicy name for a cat."},
    ]
    turns = []
    for question, reply in [("One?", "1."), ("Two?", "2."), ("Three?", "3.")]:
        messages.append({"role": "user", "content": question})
        body = {
            "model": "mind/Echo",
            "messages": messages,
            "mind_options": {"model": "mock", "mock_reply": reply},
        }
        answer = client.post("/v1/chat/completions", json=body, headers=headers)
        assert answer.status_code == 200, answer.text
        turns.append(answer.json()["id"])
        messages.append(
            {"role": "assistant", "content": answer.json()["choices"][0]["message"]["content"]}
        )

    with mindledger.open(mind_home) as mind:
        events = mind.log(limit=500).model_dump(mode="json")
        observed = [
            e["payload"] for e in events if e["type"] == "mind.conversation.message_observed"
        ]
        assert sorted(p["text"] for p in observed) == [
            "A spicy name for a cat.",
            "Earlier, elsewhere: my cat is called Pimiento.",
        ]
        assert all(p["session"].startswith("/v1/chat/completions before turn ") for p in observed)
        assert mind.verify().ok
        assert "Pimiento" in str(mind.recall("what is my cat called Pimiento").model_dump())


@pytest.mark.parametrize("stream", [False, True])
def test_an_earlier_message_no_message_could_hold_is_a_400_before_the_turn(
    served: tuple[TestClient, Minds], stream: bool
) -> None:
    """It was a turn recorded and streamed, then an error event (or a 400) from observing it."""
    client, minds = served
    mind = next(iter(minds))
    headers = {"Authorization": f"Bearer {mind.token}"}
    before = mind.status().head.position
    body = {
        "model": "mind/Echo",
        "messages": [
            {"role": "user", "content": "Fine"},
            {"role": "user", "content": "a bell \x07 rings"},
            {"role": "user", "content": "Next?"},
        ],
        "stream": stream,
        "mind_options": {"model": "mock", "mock_reply": "Ok."},
    }

    answer = client.post("/v1/chat/completions", json=body, headers=headers)

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == "messages[1].content"
    assert "`messages[1].content`" in error["message"] and "U+0007" in error["message"]
    assert mind.status().head.position == before


def test_a_refused_earlier_message_of_a_response_names_its_input_item(
    served: tuple[TestClient, Minds],
) -> None:
    """The message named the floor's argument (`history[0].content`), which no request has."""
    client, minds = served
    mind = next(iter(minds))
    body = {
        "model": "mind/Echo",
        "input": [
            {"role": "user", "content": "a bell \x07 rings"},
            {"role": "user", "content": "Next?"},
        ],
        "mind_options": {"model": "mock", "mock_reply": "Ok."},
    }

    answer = client.post(
        "/v1/responses", json=body, headers={"Authorization": f"Bearer {mind.token}"}
    )

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == "input[0]"
    assert "`input[0].content`" in error["message"] and "history" not in error["message"]


@pytest.mark.parametrize(
    ("route", "items"), [("/v1/chat/completions", "messages"), ("/v1/responses", "input")]
)
def test_too_long_a_history_is_refused_naming_the_requests_field(
    served: tuple[TestClient, Minds], route: str, items: str
) -> None:
    """It named the floor's `history`, which no request has."""
    client, minds = served
    mind = next(iter(minds))
    earlier = [{"role": "user", "content": f"m{n}"} for n in range(1001)]
    body = {
        "model": "mind/Echo",
        items: [*earlier, {"role": "user", "content": "Next?"}],
        "mind_options": {"model": "mock", "mock_reply": "Ok."},
    }

    answer = client.post(route, json=body, headers={"Authorization": f"Bearer {mind.token}"})

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == items
    assert f"`{items}` holds at most 1000 earlier messages" in error["message"]
    assert "history" not in error["message"]


@pytest.mark.parametrize(
    ("route", "given", "param"),
    [
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "bell \x07"}]},
            "messages[0].content",
        ),
        ("/v1/responses", {"input": "bell \x07"}, "input"),
        (
            "/v1/responses",
            {"input": [{"role": "user", "content": "x"}, {"role": "user", "content": "bell \x07"}]},
            "input[1].content",
        ),
        ("/v1/completions", {"prompt": "bell \x07"}, "prompt"),
    ],
)
def test_a_refused_message_names_its_field(
    served: tuple[TestClient, Minds], route: str, given: dict[str, Any], param: str
) -> None:
    """The turn's own message refused (a control character) answered `param: null`."""
    client, minds = served
    mind = next(iter(minds))
    before = mind.status().head.position
    body = {
        "model": "mind/Echo",
        **given,
        "stream": True,
        "mind_options": {"model": "mock", "mock_reply": "Ok."},
    }

    answer = client.post(route, json=body, headers={"Authorization": f"Bearer {mind.token}"})

    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == param
    assert mind.status().head.position == before
