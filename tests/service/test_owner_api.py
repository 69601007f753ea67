"""The owner's change routes in-process (Starlette's test client): close a commitment, resolve
a thread, define and alias a concept, each answering what the CLI command prints with `--json`;
a refused change is one JSON error line and leaves the ledger as it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.minds import Minds

MIND = "/v1/minds/Echo"


@pytest.fixture
def served(cli: Callable[..., Any], mind_home: Path) -> Iterator[tuple[TestClient, dict[str, Any]]]:
    """A served mind with one open commitment, one live thread and one concept."""
    thread = cli("thread", "open", "First frost?", "--content", "For the ferns", "--json")
    made = {
        "cid": cli("commit", "Water the ferns", "--json").json()["cid"],
        "thread": thread.json()["id"],
    }
    assert cli("concept", "define", "garden.ferns", "The ferns by the door").exit_code == 0
    minds = Minds.open([Home(mind_home)])
    with TestClient(build_app(minds), raise_server_exceptions=False) as client:
        client.headers["Authorization"] = f"Bearer {next(iter(minds)).token}"
        yield client, made
    minds.close(10)


def head(client: TestClient) -> int:
    position: int = client.get(f"{MIND}/status").json()["head"]["position"]
    return position


def test_closing_a_commitment_answers_as_mind_close_and_lists_it_closed(
    served: tuple[TestClient, dict[str, Any]],
) -> None:
    client, made = served

    done = client.post(f"{MIND}/commitments/{made['cid']}/close", json={"reason": "watered"})
    again = client.post(f"{MIND}/commitments/{made['cid']}/close", json={})
    listed = client.get(f"{MIND}/commitments?all=true").json()

    assert done.status_code == 200, done.text
    assert done.json() == {
        "cid": made["cid"],
        "episode": 1,
        "text": "Water the ferns",
        "closed": True,
        "reason": "watered",
    }
    assert 400 <= again.status_code < 500 and set(again.json()) == {"error"}
    assert [(c["status"], c["close_reason"]) for c in listed] == [("closed", "watered")]


def test_resolving_a_thread_needs_what_its_verdict_needs(
    served: tuple[TestClient, dict[str, Any]],
) -> None:
    client, made = served
    path = f"{MIND}/threads/{made['thread']}/resolve"
    before = head(client)

    refused = client.post(path, json={"verdict": "dissolved"})
    unchanged = head(client)
    done = client.post(path, json={"verdict": "dissolved", "reason": "it never frosts here"})
    listed = client.get(f"{MIND}/threads?all=true").json()

    assert refused.status_code == 400 and "reason" in refused.json()["error"]["message"]
    assert unchanged == before
    assert done.status_code == 200, done.text
    assert done.json()["id"] == made["thread"] and done.json()["verdict"] == "dissolved"
    assert [(t["status"], t["reason"]) for t in listed] == [("resolved", "it never frosts here")]


def test_defining_and_aliasing_a_concept_answer_as_the_cli_does(
    served: tuple[TestClient, dict[str, Any]],
) -> None:
    client, _ = served

    defined = client.post(
        f"{MIND}/concepts/garden.ferns/define", json={"definition": "Three ferns by the door"}
    )
    aliased = client.post(f"{MIND}/concepts/garden.ferns/aliases", json={"alias": "ferns"})
    repeated = client.post(f"{MIND}/concepts/garden.ferns/aliases", json={"alias": "ferns"})
    listed = client.get(f"{MIND}/concepts").json()

    assert defined.json() == {"token": "garden.ferns", "version": 2}
    assert aliased.json() == {"token": "garden.ferns", "alias": "ferns", "added": True}
    assert repeated.json()["added"] is False
    assert [(c["definition"], c["aliases"]) for c in listed] == [
        ("Three ferns by the door", ["ferns"])
    ]


# Each refused in turn on one served mind (one set-up: they all change nothing).
REFUSED: list[tuple[str, dict[str, Any], int]] = [
    ("/commitments/cdeadbeef00/close", {}, 404),
    ("/commitments/{cid}/close", {"reason": 7}, 400),
    ("/commitments/{cid}/close", {"why": "done"}, 400),
    ("/threads/{thread}/resolve", {"verdict": "forgotten-about"}, 400),
    ("/threads/{thread}/resolve", {}, 400),
    ("/threads/tffffffff/resolve", {"verdict": "abandoned", "reason": "x"}, 404),
    ("/concepts/Not A Token/define", {"definition": "x"}, 400),
    ("/concepts/garden.ferns/define", {"definition": ""}, 400),
    ("/concepts/garden.unknown/aliases", {"alias": "nope"}, 404),
]


def test_a_refused_change_is_one_json_error_and_changes_nothing(
    served: tuple[TestClient, dict[str, Any]],
) -> None:
    client, made = served
    before = head(client)

    answers = [client.post(MIND + path.format(**made), json=body) for path, body, _ in REFUSED]

    assert [a.status_code for a in answers] == [status for _, _, status in REFUSED]
    assert all(set(a.json()) == {"error"} for a in answers)
    assert all("\n" not in a.json()["error"]["message"] for a in answers)
    assert head(client) == before


def test_another_token_changes_nothing(served: tuple[TestClient, dict[str, Any]]) -> None:
    client, made = served
    before = head(client)

    answer = client.post(
        f"{MIND}/commitments/{made['cid']}/close",
        json={},
        headers={"Authorization": "Bearer " + "x" * 43},
    )

    assert answer.status_code == 401
    assert head(client) == before
