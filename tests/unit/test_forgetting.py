"""What a forget's selector reaches (`Reach`, one stored event at a time, clear fields only),
how id prefixes are read, who may forget, and that a forget is recorded once."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

import pytest

from mindledger.domain.application import Mind
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.events import EVENT_MODULES, stream_id
from mindledger.domain.forgetting import (
    ForgetRoleError,
    Forgetting,
    Reach,
    Selector,
    check_forget_role,
    hex_prefix,
)
from tests.conftest import REPO

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
TURN = "6c7c1271" + "a" * 24
OTHER_TURN = "9e14628e" + "b" * 24
THREAD = "510171ec" + "c" * 24
CONCEPT = stream_id("concept", "garden.secret").hex
Event = tuple[str, str, dict[str, Any], datetime]
# A small ledger: two turns, a thread, a concept, a commitment in two episodes, an imported
# conversation in which Caroline speaks, and a knowledge item with a question routed to it.
LEDGER: list[Event] = [
    ("mind.identity.created", "1" * 32, {}, T0),
    ("mind.turn.started", TURN, {"speaker": "user"}, T0),
    ("mind.turn.replied", TURN, {}, T0),
    ("mind.turn.completed", TURN, {}, T0),
    ("mind.thread.opened", THREAD, {}, T0 + timedelta(hours=1)),
    ("mind.concept.defined", CONCEPT, {"token": "garden.secret"}, T0 + timedelta(hours=1)),
    ("mind.commitment.opened", "2" * 32, {"cid": "c1a2b3c4d5e"}, T0 + timedelta(hours=1)),
    ("mind.commitment.closed", "2" * 32, {}, T0 + timedelta(hours=2)),
    ("mind.commitment.opened", "3" * 32, {"cid": "c1a2b3c4d5e"}, T0 + timedelta(hours=2)),
    ("mind.conversation.started", "4" * 32, {}, T0 + timedelta(hours=2)),
    ("mind.conversation.message_observed", "4" * 32, {"speaker": "Caroline"}, T0),
    ("mind.conversation.message_observed", "4" * 32, {"speaker": "Melanie"}, T0),
    ("mind.knowledge.captured", "5" * 32, {"item_id": "kfe8af811d3"}, T0 + timedelta(hours=3)),
    ("mind.ask.routed", "6" * 32, {"item_id": "kfe8af811d3"}, T0 + timedelta(hours=3)),
    ("mind.turn.started", OTHER_TURN, {"speaker": "user"}, T0 + timedelta(hours=3)),
    ("mind.thread.mentioned", THREAD, {}, T0 + timedelta(hours=3)),
]


def reached(kind: str, value: str, ledger: list[Event] = LEDGER) -> list[int]:
    """The positions (1-based) of the events `--kind value` reaches."""
    before = None
    if kind == "before":
        before = datetime.fromisoformat(value)
    reach = Reach(Selector(kind, value, before))  # type: ignore[arg-type]
    found = [n for n, (t, s, state, at) in enumerate(ledger, 1) if reach.event(t, s, state, at)]
    reach.check_unambiguous()
    return found


@pytest.mark.parametrize(
    ("kind", "value", "positions"),
    [
        ("turn", TURN, [2, 3, 4]),
        ("turn", TURN[:8].upper(), [2, 3, 4]),
        ("turn", f"{TURN[:8]}-{TURN[8:12]}-{TURN[12:16]}-{TURN[16:20]}-{TURN[20:]}", [2, 3, 4]),
        ("thread", "t" + THREAD[:8], [5, 16]),
        ("thread", THREAD, [5, 16]),
        ("concept", "garden.secret", [6]),
        ("commitment", "C1A2B3C4D5E", [7, 8, 9]),
        ("conversation", "4" * 8, [10, 11, 12]),
        ("speaker", "  caroline ", [11]),
        ("speaker", "USER", [2, 14, 15]),  # 14: a question `mind ask` routed
        ("knowledge", "kfe8af811", [13, 14]),
        ("knowledge", "5" * 32, [13]),
        ("before", (T0 + timedelta(hours=1)).isoformat(), [1, 2, 3, 4, 11, 12]),
    ],
)
def test_a_selector_reaches_the_events_of_what_it_names_and_nothing_else(
    kind: str, value: str, positions: list[int]
) -> None:
    assert reached(kind, value) == positions


def test_a_concept_is_named_by_its_token_in_any_case() -> None:
    assert reached("concept", " Garden.Secret ") == [6]

    with pytest.raises(InvalidInputError, match="`concept` 'garden secret' is not valid"):
        reached("concept", "garden secret")


def test_a_turn_reaches_the_question_routed_when_knowledge_answered_it() -> None:
    asked = {"item_id": "kfe8af811d3", "turn_id": TURN, "via": "turn"}
    routed = ("mind.ask.routed", "7" * 32, asked, T0)
    other = ("mind.ask.routed", "8" * 32, {"item_id": None, "turn_id": OTHER_TURN}, T0)

    assert reached("turn", TURN, [*LEDGER, routed, other]) == [2, 3, 4, 17]
    assert reached("speaker", "user", [*LEDGER, routed, other]) == [2, 14, 15, 17, 18]
    assert reached("speaker", "autonomy", [*LEDGER, routed, other]) == []


def test_a_prefix_two_streams_share_is_refused_naming_both() -> None:
    twin = "6c7c1271" + "d" * 24
    ledger = [*LEDGER, ("mind.turn.started", twin, {"speaker": "user"}, T0)]

    with pytest.raises(InvalidInputError, match="`turn` 6c7c1271 names 2 streams") as refused:
        reached("turn", "6c7c1271", ledger)

    assert TURN[:12] in str(refused.value) and twin[:12] in str(refused.value)
    assert reached("turn", TURN[:9], ledger) == [2, 3, 4]


@pytest.mark.parametrize("value", ["", "abc", "6c7c127", "t6c7c127", "zzzzzzzzzz", "6c7c 1271"])
def test_an_id_prefix_needs_eight_hex_digits(value: str) -> None:
    with pytest.raises(InvalidInputError, match="at least 8 of its first hex digits") as refused:
        hex_prefix(value, "turn")

    # The request word, which the command line shows as its flag (`--turn`), Python as itself.
    assert str(refused.value).startswith("`turn` takes an id") and refused.value.param == "turn"


def test_only_the_owner_may_forget() -> None:
    check_forget_role("owner")

    with pytest.raises(ForgetRoleError, match="only the mind's owner can forget"):
        check_forget_role("ai")


def test_a_forget_is_recorded_once_however_often_it_is_finished(app: Mind) -> None:
    forget_id = uuid4().hex
    plan = {
        "forget_id": forget_id,
        "selector": "speaker",
        "value": "caroline",
        "counts": {"conversation": 2},
        "events": 2,
        "keys": 2,
        "context_turns": 1,
    }

    first = app.record_forgotten(plan, "owner", "cli")
    again = app.record_forgotten(plan, "owner", "cli")

    assert (first, again) == (True, False)
    events = list(app.events.get(Forgetting.stream(forget_id)))
    assert [type(e) for e in events] == [Forgetting.Forgotten]
    with pytest.raises(ForgetRoleError):
        app.record_forgotten({**plan, "forget_id": uuid4().hex}, "ai", "cli")


def _sealing_modules() -> set[str]:
    """The domain modules that define an event class with a SEALED assignment."""
    found = set()
    for path in (REPO / "domain").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                assigned = {
                    t.id
                    for stmt in node.body
                    if isinstance(stmt, ast.Assign)
                    for t in stmt.targets
                    if isinstance(t, ast.Name)
                }
                if {"TOPIC", "SEALED"} <= assigned:
                    found.add(path.stem)
    return found


def test_every_module_whose_events_seal_a_field_is_found_by_every_reader() -> None:
    # Readers find an event's class through `event_class`, which imports its module by kind.
    named = {module.rsplit(".", 1)[1] for module in EVENT_MODULES.values()}

    assert _sealing_modules() - named == set()
