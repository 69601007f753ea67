"""A forgotten knowledge item is as if it had never been stored: no route reuses it, no lookup
by its question or id finds it (the same answer and exit code as a question never stored), and
`knowledge list --all` shows it forgotten, without content. Its question may be kept again."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]
KEPT = "What is Kqzq?"
MOCK = ("--model", "mock", "--no-server")


def remember_then_forget(cli: Cli, question: str = KEPT) -> str:
    kept = cli(
        "remember",
        "Zqxanswer",
        "--question",
        question,
        "--state",
        "supported",
        "--confidence",
        "0.9",
        "--json",
    ).json()
    done = cli("forget", "--knowledge", kept["id"], "--yes", "--json")
    assert done.exit_code == 0, done.stderr
    return str(kept["id"])


def route_of(data: dict[str, Any]) -> tuple[Any, ...]:
    return (data["route"], data["decision"], data["reasons"], data["score"], data["candidates"])


def test_a_turn_on_a_forgotten_question_goes_to_the_model(cli: Cli, mind_home: Path) -> None:
    remember_then_forget(cli)

    result = cli("turn", KEPT, *MOCK, "--mock-reply", "Fresh reply", "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json()["reply"] == "Fresh reply"
    routes = cli("query", "SELECT route, item_id FROM knowledge_routes", "--json").json()
    assert routes == []


def test_asking_a_forgotten_question_routes_as_a_question_never_stored(
    cli: Cli, mind_home: Path
) -> None:
    remember_then_forget(cli)

    forgotten = cli("ask", KEPT, *MOCK[:2], "--mock-reply", "Fresh answer", "--json")

    assert forgotten.exit_code == 0, forgotten.stderr
    # What a question never stored gets in a mind without knowledge: no score, no candidate.
    assert route_of(forgotten.json()) == ("model", "miss", [], None, [])
    assert (forgotten.json()["answer"], forgotten.json()["stored"]) == ("Fresh answer", True)
    assert forgotten.json()["item"]["question"] == KEPT
    assert forgotten.json()["item"]["state"] == "unverified"
    assert "[forgotten]" not in forgotten.output


@pytest.mark.parametrize("by", ["question", "id"])
def test_showing_a_forgotten_item_answers_as_for_an_unknown_one(
    cli: Cli, mind_home: Path, by: str
) -> None:
    item = remember_then_forget(cli)
    target, unknown = (KEPT, "What is Vrrb?") if by == "question" else (item, "k0123456789")

    shown = cli("knowledge", "show", target)
    missing = cli("knowledge", "show", unknown)

    assert (shown.exit_code, shown.output) == (missing.exit_code, missing.output) == (1, "")
    assert shown.stderr.replace(target, "T") == missing.stderr.replace(unknown, "T")
    assert cli("knowledge", "show", target, "--json").exit_code == 1


@pytest.mark.parametrize("action", [["verify"], ["edit", "new"], ["delete"]])
def test_a_forgotten_item_cannot_be_judged_edited_or_deleted(
    cli: Cli, mind_home: Path, action: list[str]
) -> None:
    item = remember_then_forget(cli)

    result = cli("knowledge", action[0], item, *action[1:])
    unknown = cli("knowledge", action[0], "k0123456789", *action[1:])

    assert result.exit_code == unknown.exit_code == 1
    assert result.stderr.replace(item, "T") == unknown.stderr.replace("k0123456789", "T")


def test_listing_all_shows_a_forgotten_item_forgotten_with_no_content(
    cli: Cli, mind_home: Path
) -> None:
    item = remember_then_forget(cli)

    listed = cli("knowledge", "list", "--all", "--json").json()
    table = cli("knowledge", "list", "--all")

    assert [(r["item_id"], r["state"], r["deleted"]) for r in listed] == [(item, "forgotten", True)]
    assert {k: listed[0][k] for k in ("question", "answer", "intent_hash", "concepts")} == {
        "question": None,
        "answer": None,
        "intent_hash": None,
        "concepts": [],
    }
    assert "forgotten" in table.output
    assert "[forgotten]" not in table.output
    assert cli("knowledge", "list", "--json").json() == []


def test_a_forgotten_question_can_be_kept_again_as_new(cli: Cli, mind_home: Path) -> None:
    item = remember_then_forget(cli)

    again = cli("remember", "Zqxsecond", "--question", KEPT, "--json")
    verified = cli("knowledge", "verify", KEPT)
    asked = cli("ask", KEPT, *MOCK[:2], "--mock-reply", "unused", "--json")

    assert again.exit_code == 0, again.stderr
    # A new item: the defaults, not the forgotten one's state and confidence.
    assert (again.json()["id"], again.json()["created"], again.json()["revision"]) == (
        item,
        True,
        1,
    )
    assert (again.json()["state"], again.json()["confidence_ppm"]) == ("unverified", 500_000)
    assert verified.exit_code == 0, verified.stderr
    assert (asked.json()["route"], asked.json()["answer"]) == ("memory-exact", "Zqxsecond")
    assert asked.json()["item"]["question"] == KEPT
    shown = cli("knowledge", "show", KEPT, "--history", "--json").json()
    assert (shown["item"]["answer"], shown["item"]["state"]) == ("Zqxsecond", "verified")
    assert [p["reference"] for p in shown["provenance"]] == ["mind remember"]
    assert [(h["type"], h.get("answer")) for h in shown["history"]] == [
        ("captured", "Zqxsecond"),
        ("judged", None),
    ]
    assert "[forgotten]" not in json.dumps(shown)
