"""The /v1 knowledge routes on a real `mind serve`: the owner's capture, decisions, edit,
delete, approve/discard and ask answer what `mind ... --json` prints; an ambiguous reference
is a 409 listing the candidates and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import item_id_at
from tests.service.serving import Server, init_home, start_server
from tests.service.test_serve_api import cli_json

K = "/v1/minds/Echo/knowledge"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    home = init_home(tmp_path_factory.mktemp("knowledge") / "echo", "Echo")
    running = start_server([home])
    try:
        yield running, home
    finally:
        running.kill()


def ok(server: Server, method: str, path: str, body: Any = None) -> Any:
    answer = server.request(method, path, body)
    assert answer.status == 200, answer.body
    return answer.json()


def remember(server: Server, question: str, answer: str, **extra: Any) -> Any:
    return ok(server, "POST", K, {"text": answer, "question": question, **extra})


def count_events(server: Server) -> int:
    body = {"sql": "SELECT count(*) AS n FROM events"}
    return int(ok(server, "POST", "/v1/minds/Echo/query", body)[0]["n"])


def test_remember_lists_and_shows_what_the_cli_shows(served: tuple[Server, Path]) -> None:
    server, home = served
    kept = remember(
        server,
        "Where is the spare key?",
        "Under the blue pot",
        state="supported",
        confidence=0.9,
        freshness="volatile",
        about=["house"],
    )

    listed = ok(server, "GET", K)
    shown = ok(server, "GET", f"{K}/{kept['id']}?history=1")

    assert (kept["revision"], kept["state"], kept["confidence_ppm"], kept["created"]) == (
        1,
        "supported",
        900_000,
        True,
    )
    assert listed == cli_json(home, "knowledge", "list", "--json")
    assert shown == cli_json(home, "knowledge", "show", kept["id"], "--history", "--json")
    assert shown["item"]["freshness"] == "volatile"
    assert [h["type"] for h in shown["history"]] == ["captured"]


def test_owner_decisions_and_edit_change_the_item(served: tuple[Server, Path]) -> None:
    server, _ = served
    kept = remember(server, "Who feeds the cat?", "Ana")
    ref = f"{K}/{kept['id']}"

    verified = ok(server, "POST", f"{ref}/verify", {"note": "asked Ana"})
    edited = ok(server, "POST", f"{ref}/edit", {"answer": "Ana and Luis"})
    disputed = ok(server, "POST", f"{ref}/dispute", {})
    retracted = ok(server, "POST", f"{ref}/retract", {})
    shown = ok(server, "GET", f"{ref}?history=1")

    assert (verified["state"], verified["confidence_ppm"]) == ("verified", 950_000)
    assert edited["revision"] == 2
    assert disputed["state"] == "disputed"
    assert (retracted["state"], retracted["confidence_ppm"]) == ("retracted", 0)
    assert shown["item"]["answer"] == "Ana and Luis"
    history = [h["type"] for h in shown["history"]]
    assert history[0] == "captured" and "edited" in history and len(history) == 5


def test_a_question_can_name_the_item(served: tuple[Server, Path]) -> None:
    server, _ = served
    kept = remember(server, "When is the market open?", "Saturdays")

    shown = ok(server, "GET", f"{K}/{quote('  when is the MARKET open? ')}")

    assert shown["item"]["id"] == kept["id"]


def test_a_deleted_item_vanishes_from_the_list(served: tuple[Server, Path]) -> None:
    server, _ = served
    kept = remember(server, "What is the door code?", "4711")

    deleted = ok(server, "POST", f"{K}/{kept['id']}/delete", {"note": "leaked"})
    listed = ok(server, "GET", K)
    everything = ok(server, "GET", f"{K}?all=1")
    history = ok(server, "GET", f"{K}/{kept['id']}?history=1")["history"]

    assert deleted["state"] is not None and deleted["revision"] == 2
    assert kept["id"] not in [r["item_id"] for r in listed]
    gone = next(r for r in everything if r["item_id"] == kept["id"])
    assert (gone["deleted"], gone["answer"]) == (True, None)
    assert history[0]["answer"] == "4711" and history[-1]["type"] == "deleted"


def test_an_ambiguous_reference_is_a_409_listing_the_candidates(
    served: tuple[Server, Path],
) -> None:
    server, home = served
    # The home is the module's: a prefix an earlier test's item holds would be a third
    # candidate (1 run in ~50 of the suite met one).
    sql = {"sql": "SELECT item_id FROM knowledge"}
    held = {row["item_id"][:3] for row in ok(server, "POST", "/v1/minds/Echo/query", sql)}
    by_prefix: dict[str, list[str]] = {}
    n = 0
    while not any(len(v) == 2 for v in by_prefix.values()):
        question = f"ambiguous question {n}"
        if (prefix := item_id_at(home, question)[:3]) not in held:
            by_prefix.setdefault(prefix, []).append(question)
        n += 1
    prefix, questions = next((p, q) for p, q in by_prefix.items() if len(q) == 2)
    for question in questions:
        remember(server, question, f"answer to {question}")
    before = count_events(server)

    answer = server.request("POST", f"{K}/{prefix}/verify", {})
    shown = server.request("GET", f"{K}/{prefix}")

    assert (answer.status, shown.status) == (409, 409)
    error = answer.json()["error"]
    assert error["code"] == "ambiguous" and "nothing changed" in error["message"]
    candidates = answer.json()["candidates"]
    assert sorted(candidates) == sorted(item_id_at(home, q) for q in questions)
    assert count_events(server) == before


def test_an_unknown_reference_is_a_404(served: tuple[Server, Path]) -> None:
    server, _ = served

    answer = server.request("POST", f"{K}/zzzzzz/verify", {})
    long = server.request("POST", f"{K}/{'k' * 10_000}/verify", {})

    assert (answer.status, answer.json()["error"]["code"]) == (404, "not_found")
    message = long.json()["error"]["message"]
    assert long.status == 404 and "(10,000 characters)" in message and len(message) < 200


def test_ask_approve_and_discard_through_the_server(served: tuple[Server, Path]) -> None:
    server, _ = served
    mock = {"model": "mock", "mock_reply": "Blue."}
    q1, q2 = "What colour is the shed?", "What colour is the gate?"

    first = ok(server, "POST", "/v1/minds/Echo/ask", {"question": q1, **mock})
    approved = ok(server, "POST", f"/v1/minds/Echo/turns/{first['turn'][:8]}/approve")
    again = ok(server, "POST", "/v1/minds/Echo/ask", {"question": q1, **mock})
    other = ok(server, "POST", "/v1/minds/Echo/ask", {"question": q2, **mock})
    discarded = ok(server, "POST", f"/v1/minds/Echo/turns/{other['turn'][:8]}/discard")
    later = ok(server, "POST", "/v1/minds/Echo/ask", {"question": q2, **mock})

    assert (first["route"], first["item"]["state"]) == ("model", "unverified")
    assert (approved["state"], approved["confidence_ppm"]) == ("verified", 950_000)
    assert (again["route"], again["answer"], again["turn"]) == ("memory-exact", "Blue.", None)
    assert (discarded["state"], discarded["confidence_ppm"]) == ("retracted", 0)
    assert (later["decision"], later["reasons"]) == ("reject", ["retracted"])


def test_bad_capture_fields_are_refused_without_a_change(served: tuple[Server, Path]) -> None:
    server, _ = served
    before = count_events(server)

    bad_state = server.request("POST", K, {"text": "x", "state": "certain"})
    bad_confidence = server.request("POST", K, {"text": "x", "confidence": 2})
    boolean = server.request("POST", K, {"text": "x", "confidence": True})

    assert [r.status for r in (bad_state, bad_confidence, boolean)] == [400, 400, 400]
    assert count_events(server) == before


def test_the_knowledge_routes_are_in_the_openapi_document(served: tuple[Server, Path]) -> None:
    server, _ = served

    paths = ok(server, "GET", "/openapi.json")["paths"]

    assert "/v1/minds/{name}/knowledge/{ref}/verify" in paths
    assert "/v1/minds/{name}/turns/{turn}/approve" in paths
    assert "post" in paths["/v1/minds/{name}/ask"]


def test_a_turn_reference_that_is_malformed_or_names_no_turn_is_one_line(
    served: tuple[Server, Path],
) -> None:
    server, _ = served
    before = count_events(server)

    malformed = server.request("POST", "/v1/minds/Echo/turns/zz/approve", {})
    unknown = server.request("POST", "/v1/minds/Echo/turns/999999/discard", {})

    assert (malformed.status, malformed.json()["error"]["message"]) == (
        400,
        "'zz' is not a turn reference; give 'last', a turn number (12 or #12), a turn id or at "
        "least 4 hex digits of one",
    )
    assert (unknown.status, unknown.json()["error"]["message"]) == (
        404,
        "no turn is number 999999 and no turn has an id starting with 999999",
    )
    assert count_events(server) == before
