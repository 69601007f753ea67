"""Knowledge through the `mind` command: remember, ask (routes, zero model calls), approve,
discard, edit, delete with history, ambiguous targets, turns answered from memory, replay."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Result, item_id_at
from tests.integration.fake_provider import recording_provider

Cli = Callable[..., Result]
MCMA_ANSWER = "Multi-Channel Memory Architecture"


def head(cli: Cli) -> Any:
    return cli("query", "SELECT count(*) AS n FROM events", "--json").json()


def test_a_spanish_question_is_answered_from_memory_with_no_model_call(
    cli: Cli, mind_home: Path
) -> None:
    kept = cli(
        "remember",
        MCMA_ANSWER,
        "--question",
        "¿Qué es MCMA?",
        "--state",
        "supported",
        "--confidence",
        "0.92",
        "--json",
    ).json()

    with recording_provider() as (base, requests):
        asked = cli(
            "ask", "  ¿qué   es MCMA?  ", "--model", "openai/fake", "--api-base", base, "--json"
        )

    data = asked.json()
    assert requests == []
    assert (data["route"], data["answer"], data["reasons"], data["turn"]) == (
        "memory-exact",
        MCMA_ANSWER,
        [],
        None,
    )
    assert data["item"]["id"] == kept["id"] == item_id_at(mind_home, "¿qué es mcma?")
    assert (data["item"]["state"], data["item"]["confidence_ppm"]) == ("supported", 920_000)
    assert [(p["source"], p["reference"]) for p in data["provenance"]] == [
        ("owner", "mind remember")
    ]
    assert data["semantic"] == {"enabled": True, "reason": None}  # the offline model
    routes = cli("query", "SELECT route, decision, score, semantic FROM knowledge_routes", "--json")
    assert routes.json() == [
        {"route": "memory-exact", "decision": "reuse", "score": 1.0, "semantic": "on"}
    ]


def test_with_no_embedding_model_ask_says_semantic_matching_is_off(
    cli: Cli, mind_home: Path
) -> None:
    cli("config", "set", "embedding.model", "off")
    cli("remember", MCMA_ANSWER, "--question", "What is MCMA?", "--state", "verified")

    data = cli("ask", "What does MCMA mean?", "--model", "mock", "--mock-reply", "?", "--json")

    assert data.json()["route"] == "model"
    assert data.json()["semantic"] == {"enabled": False, "reason": "no-embedding-model"}
    assert data.json()["candidates"] == []


def test_the_offline_model_matches_a_paraphrase_and_not_a_different_question(
    cli: Cli, mind_home: Path
) -> None:
    cli(
        "remember",
        "Lisbon",
        "--question",
        "Where does Ana live?",
        "--state",
        "verified",
        "--confidence",
        "0.95",
    )
    mock = ("--model", "mock", "--mock-reply", "I do not know.")

    paraphrase = cli("ask", "In which city does Ana live?", *mock, "--json").json()
    different = cli("ask", "Who is Ana's brother?", *mock, "--json").json()

    assert (paraphrase["route"], paraphrase["answer"]) == ("memory-semantic", "Lisbon")
    assert paraphrase["score"] >= 0.78
    assert different["route"] == "model"
    assert different["candidates"][0]["score"] < 0.78


def test_a_generated_answer_is_kept_unverified_until_approved(cli: Cli, mind_home: Path) -> None:
    question = "What is the capital of France?"
    with recording_provider("Paris.") as (base, requests):
        model = ("--model", "openai/fake", "--api-base", base)
        first = cli("ask", question, *model, "--json").json()
        second = cli("ask", question, *model, "--json").json()
        approved = cli("approve", first["turn"][:8], "--json")
        third = cli("ask", question, *model, "--json").json()

    assert approved.exit_code == 0, approved.stderr
    assert len(requests) == 2
    assert (first["route"], first["stored"], first["item"]["state"]) == (
        "model",
        True,
        "unverified",
    )
    assert first["item"]["confidence_ppm"] == 500_000
    assert first["provenance"][0]["source"] == "model"
    assert (second["route"], second["stored"], second["item"]["revision"]) == ("model", False, 1)
    assert second["reasons"] == ["validation-insufficient", "confidence-below-threshold"]
    assert (third["route"], third["answer"], third["turn"]) == ("memory-exact", "Paris.", None)
    assert (third["item"]["state"], third["item"]["confidence_ppm"]) == ("verified", 950_000)


def test_a_discarded_answer_is_rejected_by_a_later_ask(cli: Cli, mind_home: Path) -> None:
    mock = ("--model", "mock", "--mock-reply", "Yes, cheese.")
    first = cli("ask", "Is the moon made of cheese?", *mock, "--json").json()

    discarded = cli("discard", "1", "--json").json()
    later = cli("ask", "Is the moon made of cheese?", *mock, "--json").json()

    assert first["route"] == "model"
    assert (discarded["state"], discarded["confidence_ppm"]) == ("retracted", 0)
    assert (later["route"], later["decision"], later["reasons"]) == (
        "model",
        "reject",
        ["retracted"],
    )


def test_revisions_edit_and_delete_keep_history_for_the_owner_only_in_the_ledger(
    cli: Cli, mind_home: Path
) -> None:
    first = cli("remember", "The office wifi is quokka", "--json").json()
    second = cli("remember", "the office  wifi is quokka", "--json").json()
    edited = cli("knowledge", "edit", first["id"], "The office wifi is wombat", "--json").json()
    deleted = cli("knowledge", "delete", first["id"][:6], "--json").json()

    history = cli("knowledge", "show", first["id"], "--history", "--json").json()["history"]
    recalled = cli("recall", "office wifi quokka wombat", "--json").output
    listed = cli("knowledge", "list", "--json").json()
    everything = cli("knowledge", "list", "--all", "--json").json()

    assert (first["revision"], second["revision"], second["id"]) == (1, 2, first["id"])
    assert (edited["revision"], deleted["revision"]) == (3, 4)
    assert [h["type"] for h in history] == ["captured", "captured", "edited", "deleted"]
    assert history[2]["previous_hash"] == history[1]["content_hash"]
    assert history[0]["answer"] == "The office wifi is quokka"
    assert "quokka" not in recalled and "wombat" not in recalled
    assert listed == []
    assert [(r["item_id"], r["answer"], r["deleted"]) for r in everything] == [
        (first["id"], None, True)
    ]


def test_an_ambiguous_target_changes_nothing_and_lists_the_candidates(
    cli: Cli, mind_home: Path
) -> None:
    by_prefix: dict[str, list[str]] = {}
    n = 0
    while not any(len(v) == 2 for v in by_prefix.values()):
        question = f"question number {n}"
        by_prefix.setdefault(item_id_at(mind_home, question)[:3], []).append(question)
        n += 1
    prefix, questions = next((p, q) for p, q in by_prefix.items() if len(q) == 2)
    for question in questions:
        cli("remember", f"answer to {question}", "--question", question)
    before = head(cli)

    result = cli("knowledge", "verify", prefix)

    assert result.exit_code == 1
    assert "names 2 knowledge items" in result.stderr and "nothing changed" in result.stderr
    for question in questions:
        assert item_id_at(mind_home, question) in result.stderr
    assert head(cli) == before


def test_a_turn_whose_message_matches_reusable_knowledge_makes_no_model_call(
    cli: Cli, mind_home: Path
) -> None:
    cli(
        "remember",
        MCMA_ANSWER,
        "--question",
        "What is MCMA?",
        "--state",
        "verified",
        "--confidence",
        "0.95",
    )

    with recording_provider() as (base, requests):
        turn = cli("turn", "what is mcma?", "--model", "openai/fake", "--api-base", base, "--json")

    assert requests == []
    assert (turn.json()["reply"], turn.json()["model"]) == (MCMA_ANSWER, "memory/knowledge")
    routes = cli("query", "SELECT route, via FROM knowledge_routes", "--json").json()
    assert routes == [{"route": "memory-exact", "via": "turn"}]


def test_a_replay_of_knowledge_and_routes_equals_the_live_read_model(
    cli: Cli, mind_home: Path
) -> None:
    kept = cli("remember", "Blue", "--question", "Favourite colour?", "--json").json()
    cli("knowledge", "verify", kept["id"])
    cli("ask", "Favourite colour?", "--json")
    cli("ask", "Favourite food?", "--model", "mock", "--mock-reply", "Pizza", "--json")
    cli("knowledge", "dispute", kept["id"])
    cli("knowledge", "delete", kept["id"])

    result = cli("replay", "--check")

    assert result.exit_code == 0, result.output + result.stderr


def test_an_owner_judgement_is_reported_in_plain_words(cli: Cli, mind_home: Path) -> None:
    cli("remember", MCMA_ANSWER, "--question", "What is MCMA?")

    verified = cli("knowledge", "verify", "What is MCMA?").output
    disputed = cli("knowledge", "dispute", "What is MCMA?").output

    assert " verified (revision " in verified
    assert " disputed (revision " in disputed


def test_an_ask_whose_model_fails_says_why_in_one_line_and_keeps_the_question(
    cli: Cli, mind_home: Path
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = ("--model", "openai/nothing", "--api-base", f"http://127.0.0.1:{port}/v1")

    shown = cli("ask", "What is the weather?", *model)
    data = cli("ask", "What is the weather?", *model, "--json")

    assert (shown.exit_code, shown.output) == (1, "")
    [line] = shown.stderr.splitlines()
    said = re.fullmatch(
        r"Error: generation failed \(connection\): .+; the question is kept in turn (\S+)", line
    )
    assert said is not None, line
    asked = data.json()
    assert data.exit_code == 1 and asked["failure"]["kind"] == "connection"
    assert asked["turn"] and said.group(1) != asked["turn"]  # two asks, two turns kept
