"""A caller's earlier messages the mind never saw are recorded as observed, once; those of its
own turns, and those an earlier request brought, are not recorded again (decision 0020)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mindledger

NOW = "2026-05-01T09:00:00Z"
OBSERVED = "mind.conversation.message_observed"
STARTED = "mind.conversation.started"


@pytest.fixture
def mind(tmp_path: Path) -> Iterator[mindledger.MindLedger]:
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now=NOW)
    with mindledger.open(home, now=NOW) as opened:
        yield opened


def observed(mind: mindledger.MindLedger) -> list[dict[str, Any]]:
    events = mind.log(limit=500).model_dump(mode="json")
    return [e["payload"] for e in events if e["type"] == OBSERVED]


@pytest.mark.floor("turn")
def test_a_client_resending_its_history_records_each_unseen_message_once(
    mind: mindledger.MindLedger,
) -> None:
    begun_elsewhere = [
        {"role": "user", "content": "My sister Alma keeps bees in Zaragoza."},
        {"role": "assistant", "content": "How lovely, bees need patience."},
    ]
    history = list(begun_elsewhere)
    for n, (message, reply) in enumerate([("One?", "1."), ("Two?", "2."), ("Three?", "3.")]):
        done = mind.turn(
            message, model="mock", mock_reply=reply, history=history, via="/v1/chat/completions"
        )
        assert done.status == "complete"
        history += [{"role": "user", "content": message}, {"role": "assistant", "content": reply}]
        if n == 0:
            first_turn = done.turn

    recorded = observed(mind)
    texts = sorted(p["text"] for p in recorded)
    assert texts == sorted(m["content"] for m in begun_elsewhere)  # each once; no turn again
    assert {p["session"] for p in recorded} == {f"/v1/chat/completions before turn {first_turn}"}
    assert mind.verify().ok
    found = mind.recall("Alma bees Zaragoza").model_dump(mode="json")
    assert "Zaragoza" in str(found)


@pytest.mark.floor("turn")
def test_a_history_of_the_minds_own_turns_records_nothing(mind: mindledger.MindLedger) -> None:
    mind.turn("What is the capital of France?", model="mock", mock_reply="Paris.")
    history = [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
    ]

    mind.turn("And of Italy?", model="mock", mock_reply="Rome.", history=history)

    assert observed(mind) == []


@pytest.mark.floor("turn")
def test_a_forgotten_message_a_client_sends_again_is_observed_again_once(
    mind: mindledger.MindLedger,
) -> None:
    history = [{"role": "user", "content": "My locker code is Kestrel."}]
    mind.turn("Hello", model="mock", mock_reply="Hi.", history=history)

    events = mind.log(limit=50).model_dump(mode="json")
    begun = next(e for e in events if e["type"] == STARTED)
    assert begun["payload"]["source"].startswith("client/")
    mind.forget("conversation", begun["aggregate"])
    for again in ("Hello again", "And again"):
        mind.turn(again, model="mock", mock_reply="Hi.", history=history)

    # The mind no longer holds it (nor anything that could recognise it): the client's copy
    # is a new observation, recorded once however often it is sent (decision 0020).
    assert [p["text"] for p in observed(mind) if "Kestrel" in str(p.get("text"))] == [
        "My locker code is Kestrel."
    ]
    assert mind.verify().ok


@pytest.mark.floor("turn")
def test_an_older_turn_sent_back_is_found_across_pages_and_not_beyond_the_limit(
    mind: mindledger.MindLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.domain import client_history

    monkeypatch.setattr(client_history, "TURNS_PER_READ", 2)
    monkeypatch.setattr(client_history, "MAX_TURNS_READ", 5)
    mind.turn("The oldest words", model="mock", mock_reply="Old reply.")
    mind.turn("Older words", model="mock", mock_reply="Reply two.")
    for n in range(3):
        mind.turn(f"Filler {n}", model="mock", mock_reply="Fine.")
    history = [
        {"role": "user", "content": "The oldest words"},  # 6 turns back: past the limit
        {"role": "user", "content": "Older words"},  # 5 turns back: the third page
        {"role": "assistant", "content": "Reply two."},
    ]

    mind.turn("Now", model="mock", mock_reply="Yes.", history=history)

    assert [p["text"] for p in observed(mind)] == ["The oldest words"]


@pytest.mark.floor("turn")
def test_forgetting_the_clients_conversation_takes_the_prompts_that_carried_it(
    mind: mindledger.MindLedger,
) -> None:
    kept = mind.turn("Unrelated", model="mock", mock_reply="Ok.").turn  # before: it stays
    history = [{"role": "user", "content": "My locker code is Kestrel."}]
    first = mind.turn("Hello", model="mock", mock_reply="Hi.", history=history).turn
    history += [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi."}]
    later = mind.turn("Again", model="mock", mock_reply="Yes.", history=history).turn
    assert "Kestrel" in str(mind.turn_prompt(str(first)).model_dump())

    events = mind.log(limit=50).model_dump(mode="json")
    begun = next(e for e in events if e["type"] == STARTED)
    mind.forget("conversation", begun["aggregate"])

    # The observed copy went, and so did the prompt records that carried it as a caller's
    # earlier message: the turn it was sent before, and a later one that sent it again.
    for turn in (first, later):
        assert "Kestrel" not in str(mind.turn_prompt(str(turn)).model_dump())
    assert "Unrelated" in str(mind.turn_prompt(str(kept)).model_dump())
    assert mind.verify().ok


@pytest.mark.floor("turn")
def test_two_clients_that_open_alike_keep_two_conversations(mind: mindledger.MindLedger) -> None:
    """Named by its first message alone, alice's and bob's conversations were one: a forget of
    one took the other's words, and what one sent was not recorded for the other."""
    opening = [{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello there."}]
    for user, secret in (("alice", "My locker code is 1234."), ("bob", "My locker code is 1234.")):
        history = [
            *opening,
            {"role": "user", "content": secret},
            {"role": "assistant", "content": "Noted."},
        ]
        mind.turn(
            "Thanks", model="mock", mock_reply="Ok.", history=history, sampling={"user": user}
        )
    again = [*opening, {"role": "user", "content": "My locker code is 1234."}]
    mind.turn("Thanks", model="mock", mock_reply="Ok.", history=again, sampling={"user": "alice"})

    events = mind.log(limit=500).model_dump(mode="json")
    recorded = [e for e in events if e["type"] == OBSERVED]
    assert len({e["aggregate"] for e in recorded}) == 2  # one conversation per client
    recorded = [e["payload"] for e in recorded]
    assert sorted(p["text"] for p in recorded).count("My locker code is 1234.") == 2  # once each
    assert mind.verify().ok


@pytest.mark.floor("turn")
@pytest.mark.parametrize(
    "text",
    ["a NUL \x00 inside", "a bell \x07", "x" * 100_001],
    ids=["nul", "control", "over-the-limit"],
)
def test_an_earlier_message_no_message_could_hold_is_refused_before_the_turn(
    mind: mindledger.MindLedger, text: str
) -> None:
    """Found trying it as an attacker: the turn was recorded complete (streamed, too), then
    observing the message refused it, so the client got a 400 (mid-stream, an error event
    after the reply) for a turn the ledger holds, and a retry ran it again."""
    from mindledger.domain.errors import InvalidInputError

    before = mind.status().head.position
    history = [{"role": "user", "content": "Fine"}, {"role": "user", "content": text}]
    with pytest.raises(InvalidInputError) as refused:
        mind.turn("Hello", model="mock", mock_reply="Hi.", history=history)

    assert refused.value.param == "history[1]"
    assert "history[1]" in str(refused.value)
    assert mind.status().head.position == before


@pytest.mark.floor("turn")
def test_a_client_whose_system_prompt_changes_each_request_records_its_messages_once(
    mind: mindledger.MindLedger,
) -> None:
    """A chat engine that puts the retrieved context or the time in its system message sends
    a new one with every request: named by it, each request was a new conversation, and the
    same examples were observed again each time (and a long chat's messages older than the
    turns looked back over, again and again)."""
    examples = [
        {"role": "user", "content": "Example: what is 2+2?"},
        {"role": "assistant", "content": "Example answer: 4."},
    ]
    history = list(examples)
    for n in range(3):
        system = f"Context retrieved for this question: document {n}. The time is 10:0{n}."
        mind.turn(
            f"Question {n}?",
            model="mock",
            mock_reply=f"Answer {n}.",
            history=history,
            system=system,
        )
        history += [
            {"role": "user", "content": f"Question {n}?"},
            {"role": "assistant", "content": f"Answer {n}."},
        ]

    assert sorted(p["text"] for p in observed(mind)) == sorted(m["content"] for m in examples)


@pytest.mark.floor("turn")
def test_a_turn_whose_earlier_messages_could_not_be_observed_still_answers(
    mind: mindledger.MindLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Observing comes after the turn is recorded: a failure there (a database gone for a
    moment, a full disk) failed the request, so a client's retry, which the mind did not
    remember as answered, ran the turn a second time. The next request observes them."""
    from mindledger.domain import client_history
    from mindledger.notices import notice_sink

    history = [{"role": "user", "content": "My sister Alma keeps bees."}]
    real = client_history.record_unseen

    def failing(*args: Any, **kwargs: Any) -> int:
        raise OSError("the database went away")

    heard: list[str] = []
    monkeypatch.setattr(client_history, "record_unseen", failing)
    token = notice_sink.set(heard.append)
    try:
        done = mind.turn("Hello", model="mock", mock_reply="Hi.", history=history)
    finally:
        notice_sink.reset(token)
    monkeypatch.setattr(client_history, "record_unseen", real)

    assert done.status == "complete" and done.reply == "Hi."
    assert len(heard) == 1 and "not observed" in heard[0] and "went away" not in heard[0]
    assert observed(mind) == []
    mind.turn("Again", model="mock", mock_reply="Yes.", history=history)
    assert [p["text"] for p in observed(mind)] == ["My sister Alma keeps bees."]


@pytest.mark.floor("turn")
def test_named_speakers_are_observed_under_their_names_and_sent_with_their_messages(
    mind: mindledger.MindLedger,
) -> None:
    """Several agents' messages, each named (a LangGraph or AutoGen team): the prompt carries
    each name with its message, an observed one keeps its speaker's name, and the mind's own
    turn sent back named is not observed again."""
    history = [
        {"role": "user", "content": "Find where Alma keeps her bees.", "name": "planner"},
        {"role": "assistant", "content": "Alma keeps bees in Zaragoza.", "name": "researcher"},
    ]
    done = mind.turn(
        "Is that right?", model="mock", mock_reply="Yes.", history=history, name="critic"
    )
    resent = [
        *history,
        {"role": "user", "content": "Is that right?", "name": "critic"},
        {"role": "assistant", "content": "Yes."},
    ]
    mind.turn("Thanks.", model="mock", mock_reply="Welcome.", history=resent, name="critic")

    prompt = mind.turn_prompt(done.turn).messages or []
    assert prompt[1:] == [*history, {"role": "user", "content": "Is that right?", "name": "critic"}]
    recorded = observed(mind)
    assert sorted((p["speaker"], p["text"]) for p in recorded) == [
        ("planner", "Find where Alma keeps her bees."),
        ("researcher", "Alma keeps bees in Zaragoza."),
    ]
    assert mind.verify().ok


def test_log_turn_shows_each_messages_speaker(capsys: pytest.CaptureFixture[str]) -> None:
    from mindledger.cli.turn_prompt import echo_prompt

    messages = [
        {"role": "user", "content": "Plan it.", "name": "planner"},
        {"role": "user", "content": "Go on."},
    ]
    echo_prompt({"turn": "ab12", "status": "complete", "model": "mock", "messages": messages})

    shown = capsys.readouterr().out.splitlines()
    assert shown[1:] == ["--- user (planner) ---", "Plan it.", "--- user ---", "Go on."]
