"""The web page's own routes (`service/web`): the page and its headers, the one-time login link
and the `/ui/api` reads, over a mind the CLI made (Starlette's test client, no browser)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mindledger.compose import Home, read_model
from mindledger.service.web.app import web_app
from mindledger.service.web.login import LoginNonces
from tests.conftest import Result
from tests.tool_turns import record_tool_turns

Cli = Callable[..., Result]
TOKEN = "a-token-for-tests-only-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
REPLY = "Sure, I will.\nCOMMIT: water the plants\nCONCEPT: plant = a living thing\nCLAIM: nonsense"


class OneMind:
    """The server's token check for one mind called Echo."""

    def __init__(self, home: Path) -> None:
        self.home = Home(home)

    def home_for(self, name: str, token: str) -> Home | None:
        return self.home if (name, token) == ("Echo", TOKEN) else None


@pytest.fixture
def client(mind_home: Path) -> TestClient:
    return TestClient(web_app(OneMind(mind_home)))


def test_the_page_is_served_with_a_policy_that_forbids_inline_scripts(client: TestClient) -> None:
    page = client.get("/")
    script = client.get("/static/app.js")

    assert page.status_code == 200
    assert "script-src 'self';" in page.headers["content-security-policy"]
    assert "unsafe-inline" not in page.headers["content-security-policy"]
    assert '<script src="/static/app.js" defer></script>' in page.text
    assert "<script>" not in page.text
    assert script.status_code == 200
    assert "textContent" in script.text


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {TOKEN}"}],
)
def test_the_reads_need_the_mind_s_token_and_give_no_data_without_it(
    client: TestClient, headers: dict[str, str]
) -> None:
    answer = client.get("/ui/api/minds/Echo/events", headers=headers)

    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "unauthorized"
    assert "events" not in answer.json()


def test_a_turn_shows_its_context_items_what_its_lines_did_and_its_rejections(
    cli: Cli, client: TestClient
) -> None:
    cli("turn", "remind me about the plants", "--model", "mock", "--mock-reply", REPLY)
    turns = client.get("/ui/api/minds/Echo/turns", headers=AUTH).json()

    detail = client.get(f"/ui/api/minds/Echo/turns/{turns[-1]['turn']}", headers=AUTH).json()

    assert [(t["text"], t["reply"], t["status"]) for t in turns] == [
        ("remind me about the plants", "Sure, I will.", "complete")
    ]
    assert detail["context"][0]["rank"] == 1
    assert detail["context"][0]["kind"] == "identity"
    assert detail["context"][0]["text"] == "[identity] Your name is Echo."
    assert {"channel", "reason", "score", "tokens"} <= set(detail["context"][0])
    assert [(e["type"], e["payload"].get("text")) for e in detail["effects"]] == [
        ("mind.commitment.opened", "water the plants"),
        ("mind.concept.defined", None),
    ]
    assert detail["rejections"] == [
        {"line": "CLAIM: nonsense", "reason": "a claim is written CLAIM:type={json}"}
    ]


def test_a_failed_generation_is_listed_as_failed_with_its_message_kept(
    cli: Cli, client: TestClient
) -> None:
    cli(
        "turn",
        "are you there?",
        "--model",
        "openai/gpt-4o-mini",
        "--api-base",
        "http://127.0.0.1:9",
    )

    turns = client.get("/ui/api/minds/Echo/turns", headers=AUTH).json()

    assert [(t["text"], t["status"]) for t in turns] == [("are you there?", "failed")]
    assert turns[0]["failure_kind"]


def test_turns_show_the_tool_calls_of_a_reply_and_the_results_that_follow_it(
    cli: Cli, client: TestClient, mind_home: Path
) -> None:
    cli("turn", "hello", "--model", "mock", "--mock-reply", "hi")
    asked, answered = record_tool_turns(mind_home, "<b>18 degrees</b>")

    turns = client.get("/ui/api/minds/Echo/turns", headers=AUTH).json()
    calls = client.get(f"/ui/api/minds/Echo/turns/{asked}", headers=AUTH).json()
    results = client.get(f"/ui/api/minds/Echo/turns/{answered}", headers=AUTH).json()

    call_id = f"call_{asked}00"
    [call] = calls["tool_calls"]
    assert call["id"] == call_id and call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert results["tool_results"] == [{"tool_call_id": call_id, "content": "<b>18 degrees</b>"}]
    assert results["follows"] == asked and results["tool_calls"] is None
    assert calls["tool_results"] is None and calls["follows"] is None
    shown = [(t["tool_calls"], t["tool_results"], t["follows"]) for t in turns]
    assert shown == [
        (None, None, None),
        (calls["tool_calls"], None, None),
        (None, results["tool_results"], asked),
    ]
    cli("forget", "--turn", asked, "--yes")
    after = client.get(f"/ui/api/minds/Echo/turns/{asked}", headers=AUTH).json()
    assert after["text"] == "[forgotten]" and after["tool_calls"] is None


def test_events_filter_by_kind_aggregate_time_and_words_and_carry_payload_and_hash(
    cli: Cli, client: TestClient
) -> None:
    cli("commit", "Water the plants")
    cli("commit", "Call the plumber")
    every = client.get("/ui/api/minds/Echo/events", headers=AUTH).json()
    plumber = next(e for e in every["events"] if "plumber" in str(e["payload"]))

    by_kind = client.get("/ui/api/minds/Echo/events?kind=commitment", headers=AUTH).json()
    by_words = client.get("/ui/api/minds/Echo/events?q=PLUMBER", headers=AUTH).json()
    by_aggregate = client.get(
        f"/ui/api/minds/Echo/events?aggregate={plumber['aggregate'][:8]}", headers=AUTH
    ).json()
    too_late = client.get(
        "/ui/api/minds/Echo/events?since=2026-05-02T00:00:00Z", headers=AUTH
    ).json()
    paged = client.get("/ui/api/minds/Echo/events?limit=1", headers=AUTH).json()

    assert [e["position"] for e in every["events"]] == [3, 2, 1]
    assert len(plumber["hash"]) == 64
    assert [e["position"] for e in by_kind["events"]] == [3, 2]
    assert [e["position"] for e in by_words["events"]] == [3]
    assert [e["position"] for e in by_aggregate["events"]] == [3]
    assert too_late["events"] == []
    assert paged["next_before"] == 3
    assert every["kinds"] == ["commitment", "identity"]


def test_a_forgotten_event_shows_forgotten_and_its_words_are_not_found(
    cli: Cli, client: TestClient, mind_home: Path
) -> None:
    cli("commit", "Water the plants")
    cli("commit", "Call the plumber")
    every = client.get("/ui/api/minds/Echo/events", headers=AUTH).json()["events"]
    envelope = stored_payload(mind_home, every[0]["position"])["text"]
    con = sqlite3.connect(mind_home / "keys.sqlite")  # forgetting, as the key store sees it
    with con:
        con.execute("DELETE FROM keys WHERE id = ?", (bytes.fromhex(envelope["$sealed"]),))
    con.close()

    after = client.get("/ui/api/minds/Echo/events", headers=AUTH).json()["events"]
    by_words = client.get("/ui/api/minds/Echo/events?q=plumber", headers=AUTH).json()
    kept = client.get("/ui/api/minds/Echo/events?q=PLANTS", headers=AUTH).json()

    assert every[0]["payload"]["text"] == "Call the plumber"
    assert after[0]["payload"]["text"] == "[forgotten]"
    assert {k: v for k, v in after[0].items() if k != "payload"} == {
        k: v for k, v in every[0].items() if k != "payload"
    }
    assert by_words["events"] == []
    assert [e["payload"]["text"] for e in kept["events"]] == ["Water the plants"]


def test_a_turn_s_context_and_prompt_are_shown_from_the_ledger_not_kept_in_the_read_model(
    cli: Cli, client: TestClient, mind_home: Path
) -> None:
    cli("remember", "The boiler code is 4417")
    cli("turn", "what is the boiler code?", "--model", "mock", "--mock-reply", "It is 4417.")
    with read_model(Home(mind_home)) as con:
        kept = con.execute(
            "SELECT position, type, payload FROM events WHERE aggregate_kind = 'turn'"
        ).fetchall()

    turn = client.get("/ui/api/minds/Echo/events?kind=turn", headers=AUTH).json()["events"]
    found = client.get("/ui/api/minds/Echo/events?q=boiler+code+is", headers=AUTH).json()
    by_type = {e["type"]: e["payload"] for e in turn}

    refs = {t: json.loads(p) for _, t, p in kept if "$ledger" in p}
    positions = {t: n for n, t, _ in kept}
    assert refs["mind.turn.completed"]["context"] == {"$ledger": positions["mind.turn.completed"]}
    assert refs["mind.turn.replied"]["prompt"] == {"$ledger": positions["mind.turn.replied"]}
    assert [i["kind"] for i in by_type["mind.turn.completed"]["context"]][:1] == ["identity"]
    assert "4417" in json.dumps(by_type["mind.turn.replied"]["prompt"])
    assert "mind.turn.replied" in {e["type"] for e in found["events"]}


def stored_payload(home: Path, position: int) -> dict[str, Any]:
    """An event's state as the ledger stores it (sealed fields as envelopes)."""
    con = sqlite3.connect(home / "ledger.sqlite")
    try:
        (state,) = con.execute(
            "SELECT e.state FROM ledger_chain c JOIN stored_events e "
            "ON e.rowid = c.notification_id WHERE c.position = ?",
            (position,),
        ).fetchone()
    finally:
        con.close()
    found: dict[str, Any] = json.loads(state)
    return found


def test_a_bad_filter_is_a_400_naming_it(client: TestClient) -> None:
    answer = client.get("/ui/api/minds/Echo/events?since=yesterday", headers=AUTH)

    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == "since must be an ISO time, not 'yesterday'"


def test_commitments_say_who_opened_and_what_closed_them(cli: Cli, client: TestClient) -> None:
    cli("commit", "Water the plants")
    cid = cli("commitments", "--json").json()[0]["cid"]
    cli("close", cid, "--reason", "done")
    cli("turn", "and the roof?", "--model", "mock", "--mock-reply", "Yes.\nCOMMIT: fix the roof")

    opened = client.get("/ui/api/minds/Echo/commitments?status=open", headers=AUTH).json()
    closed = client.get("/ui/api/minds/Echo/commitments?status=closed", headers=AUTH).json()
    pages = (opened["rows"], closed["rows"])

    assert [[(r["text"], r["opened_in_turn"], r["closed_by"]) for r in rows] for rows in pages] == [
        [("fix the roof", 1, None)],
        [("Water the plants", None, "command")],
    ]
    assert (opened["open"], opened["closed"]) == (1, 1)


def test_commitment_pages_hold_at_most_the_limit_and_count_them_all(
    cli: Cli, client: TestClient
) -> None:
    for n in range(3):
        cli("commit", f"Promise {n}")

    page = client.get("/ui/api/minds/Echo/commitments?limit=2", headers=AUTH).json()

    assert [r["text"] for r in page["rows"]] == ["Promise 0", "Promise 1"]
    assert page["open"] == 3


def test_tension_curves_rise_from_zero_over_a_thread_s_life(cli: Cli, client: TestClient) -> None:
    cli("thread", "open", "The launch date", "--content", "The user hinted at May")
    stream = cli("threads", "--json").json()[0]["stream_id"]

    curves = client.get(f"/ui/api/minds/Echo/tension?thread={stream}", headers=AUTH).json()

    values = [v for _, v in curves[stream]]
    assert values[0] == 0.0
    assert values == sorted(values)


def test_a_tension_curve_ends_at_the_tension_mind_threads_gives_under_changed_settings(
    cli: Cli, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("thread", "open", "The launch date", "--content", "The user hinted at May")
    monkeypatch.setenv("MIND_NOW", "2026-05-02T09:00:00Z")
    cli("config", "set", "threads.base_rate", "0.5")
    monkeypatch.setenv("MIND_NOW", "2026-05-04T09:00:00Z")
    listed = cli("threads", "--json").json()[0]

    curves = client.get(
        f"/ui/api/minds/Echo/tension?thread={listed['stream_id']}", headers=AUTH
    ).json()

    assert curves[listed["stream_id"]][-1][1] == round(listed["tension"], 4)


def test_the_threads_page_holds_the_tensest_and_counts_them_all(
    cli: Cli, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    for day, label in [(1, "oldest"), (2, "middle"), (3, "newest")]:
        monkeypatch.setenv("MIND_NOW", f"2026-05-0{day}T09:00:00Z")
        cli("thread", "open", label, "--content", "Come back to it")
    monkeypatch.setenv("MIND_NOW", "2026-05-06T09:00:00Z")

    page = client.get("/ui/api/minds/Echo/threads?limit=2", headers=AUTH).json()

    assert [t["label"] for t in page["threads"]] == ["oldest", "middle"]
    assert page["total"] == 3
    assert page["threads"][0]["tension"] > page["threads"][1]["tension"]


def test_the_concepts_page_holds_the_first_by_name_and_the_relations(
    cli: Cli, client: TestClient
) -> None:
    for token in ("tree", "plant", "leaf"):
        cli("concept", "define", token, f"a {token}")
    cli("concept", "relate", "tree", "plant", "--as", "is_a")

    page = client.get("/ui/api/minds/Echo/concepts?limit=2", headers=AUTH).json()

    assert [c["token"] for c in page["concepts"]] == ["leaf", "plant"]
    assert page["total"] == 3
    assert page["relations"] == [{"source": "tree", "relation": "is_a", "target": "plant"}]


def test_a_concept_s_versions_list_every_change_to_it(cli: Cli, client: TestClient) -> None:
    cli("concept", "define", "plant", "a living thing")
    cli("concept", "define", "plant", "a green living thing")
    cli("concept", "alias", "plant", "greenery")

    versions = client.get("/ui/api/minds/Echo/concepts/greenery/versions", headers=AUTH).json()

    assert [v["type"] for v in versions] == [
        "mind.concept.defined",
        "mind.concept.defined",
        "mind.concept.aliased",
    ]


def test_the_knowledge_view_lists_items_with_state_and_confidence(
    cli: Cli, client: TestClient
) -> None:
    cli("remember", "Multi-Channel Memory Architecture", "--question", "What is MCMA?")

    features = client.get("/ui/api/minds/Echo/features", headers=AUTH).json()
    tables = client.get("/ui/api/minds/Echo/knowledge", headers=AUTH).json()

    assert features == {
        "knowledge": True,
        "budget": {"default": 2000, "turn_floor": 200, "recall_floor": 50},
        "thread_verdicts": ["answered", "superseded", "dissolved", "abandoned"],
        "forget_selectors": [
            "turn",
            "conversation",
            "speaker",
            "commitment",
            "concept",
            "thread",
            "knowledge",
            "before",
        ],
    }
    columns = tables["knowledge"]["columns"]
    [row] = tables["knowledge"]["rows"]
    item = dict(zip(columns, row, strict=True)) if isinstance(row, list) else row
    assert (item["question"], item["answer"], item["state"], item["confidence_ppm"]) == (
        "What is MCMA?",
        "Multi-Channel Memory Architecture",
        "unverified",
        500000,
    )


def test_a_login_link_works_once(mind_home: Path) -> None:
    client = TestClient(web_app(OneMind(mind_home), LoginNonces()))
    link = client.post("/ui/api/minds/Echo/login-link", headers=AUTH).json()

    first = client.post("/ui/login", json={"nonce": link["nonce"]})
    second = client.post("/ui/login", json={"nonce": link["nonce"]})

    assert link["path"] == f"/#login={link['nonce']}"
    assert first.json() == {"mind": "Echo", "token": TOKEN}
    assert second.status_code == 401


def test_a_login_link_expires(mind_home: Path) -> None:
    now = [100.0]
    nonces = LoginNonces(clock=lambda: now[0])
    nonce = nonces.issue("Echo", TOKEN)

    now[0] += 121

    assert nonces.redeem(nonce) is None


def test_a_login_link_needs_the_token_of_that_mind(client: TestClient) -> None:
    answer = client.post("/ui/api/minds/Echo/login-link", headers={"Authorization": "Bearer x"})

    assert answer.status_code == 401


def test_mind_open_without_a_running_server_says_how_to_start_one(
    cli: Cli, mind_home: Path
) -> None:
    result = cli("open", "--print-url")

    assert result.exit_code == 1
    assert f"Error: no server serves {mind_home}; start one with `mind serve`" in result.stderr


def test_mind_open_names_a_server_that_is_gone(cli: Cli, mind_home: Path) -> None:
    gone = {"pid": 2**22 + 1, "url": "http://127.0.0.1:9"}
    (mind_home / "server.json").write_text(json.dumps(gone))

    result = cli("open", "--json")

    assert result.exit_code == 1
    assert f"(pid {gone['pid']}) is gone" in result.stderr


def test_mind_open_never_sends_the_token_to_a_stale_server_json_whose_pid_was_reused(
    cli: Cli, mind_home: Path
) -> None:
    # This very process is alive, but began after the file's `started`: not the server.
    reused = {
        "pid": os.getpid(),
        "started": "2020-01-01T00:00:00+00:00",
        "url": "http://127.0.0.1:9",
    }
    (mind_home / "server.json").write_text(json.dumps(reused))

    result = cli("open", "--json")

    assert result.exit_code == 1
    assert f"is stale (pid {os.getpid()} is not the server that wrote it)" in result.stderr
