"""Turns through the application service, with scripted replies through LiteLLM's own mock."""

from __future__ import annotations

import gc
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings
from mindledger.compose import (
    Home,
    build_model,
    open_mind,
    open_reader,
    read_model,
    turn_service,
)
from mindledger.domain.turn import Turn
from mindledger.domain.turns import TurnOutcome
from mindledger.projections.engine.projector import ProjectionError
from mindledger.projections.engine.registry import HANDLERS
from mindledger.projections.retrieval.context import DROPPED_KEPT
from tests.integration.fake_provider import failing_provider
from tests.integration.ledger_factory import sqlite_mind

Say = Callable[..., TurnOutcome]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    sqlite_mind(tmp_path, commands=0)
    return Home(tmp_path)


@pytest.fixture
def say(home: Home) -> Say:
    def run(text: str, reply: str, budget: int = 2000) -> TurnOutcome:
        model = LiteLLMModel(ModelSettings(spec="mock", mock_reply=reply))
        with turn_service(home) as service:
            return service.run(text, model, budget=budget)

    return run


def topics(home: Home) -> list[str]:
    return [r.topic for r in open_reader(home).rows()]


def test_a_turn_records_the_message_first_then_reply_and_effects_together(
    home: Home, say: Say
) -> None:
    outcome = say("Remind me to buy milk", "Will do.\nCOMMIT: buy milk on Friday")

    assert outcome.status == "complete"
    assert outcome.reply == "Will do."
    assert topics(home)[1:] == [
        "mind.turn.started",
        "mind.turn_numbers.given",  # the turn's number, in the message's transaction
        "mind.turn.replied",
        "mind.commitment.opened",
        "mind.turn.completed",
    ]
    assert open_mind(home).commitment(outcome.opened[0]).origin == "assistant"


def test_every_control_line_takes_effect(home: Home, say: Say) -> None:
    cid = open_mind(home).open_commitment("water the plants").cid
    say("define things", "CONCEPT: user.home = where the user lives")

    outcome = say(
        "lots",
        "\n".join(
            [
                "Done.",
                f"CLOSE: {cid} watered",
                "COMMIT: call mum",
                'CLAIM:event_exists={"id": 1}',
                f'CLAIM:commitment_status={{"cid": "{cid}", "open": false}}',
                "CONCEPT: user.groceries = what the user buys",
                "RELATE: user.groceries -> part-of -> user.home",
                "REFLECT: the user likes lists",
            ]
        ),
    )

    app = open_mind(home)
    assert outcome.rejections == []
    assert outcome.closed == [cid] and app.commitment(cid).closed
    assert [c["type"] for c in outcome.claims] == ["event_exists", "commitment_status"]
    assert app.concept("user.groceries").relations == [("user.home", "part-of")]
    with read_model(home) as con:
        reflections = con.execute("SELECT text FROM messages WHERE role = 'reflection'").fetchall()
    assert reflections == [("the user likes lists",)]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("CLOSE: c0000000000", "unknown CID c0000000000"),
        ("CLAIM:event_exists={id: 1}", "malformed JSON"),
        ('CLAIM:weather={"sunny": true}', "unknown claim type 'weather'"),
        ('CLAIM:event_exists={"id": 99999}', "claim is false: there is no event 99999"),
        ('CLAIM:event_exists={"id": 1, "evidence": [5]}', "evidence not retrieved"),
        ('CLAIM:event_exists={"id": 1, "evidence": [4242]}', "do not exist"),
        ("CLAIM:event_exists=[1]", "must be an object"),
        ("RELATE: a.b -> rel -> c.d", "concept a.b is not defined"),
        ("CONCEPT: no equals sign", "CONCEPT: token = definition"),
        ("COMMIT: ", "commitment text is empty"),
    ],
)
def test_each_bad_line_is_a_recorded_rejection_and_its_siblings_still_apply(
    home: Home, say: Say, line: str, reason: str
) -> None:
    say("first", "ok")  # position 5 (its completion) exists but is never a context item

    outcome = say("second", f"Fine.\n{line}\nCOMMIT: keep going")

    assert [r["line"] for r in outcome.rejections] == [line.strip()]
    assert reason in outcome.rejections[0]["reason"]
    assert len(outcome.opened) == 1
    assert "mind.turn.line_rejected" in topics(home)


def test_opening_an_open_commitment_from_a_reply_is_rejected(home: Home, say: Say) -> None:
    say("one", "COMMIT: call mum")

    outcome = say("two", "COMMIT: Call mum.")

    assert outcome.opened == []
    assert "already open" in outcome.rejections[0]["reason"]


def test_a_name_proposed_then_ratified_on_a_later_turn_is_adopted_exactly_once(
    home: Home, say: Say
) -> None:
    proposed = say("name yourself", 'CLAIM:identity_proposal={"name": "Vega"}')
    same_turn = say(
        "again", 'CLAIM:identity_proposal={"name": "Nova"}\nCLAIM:identity_ratify={"name": "Nova"}'
    )
    ratified = say("yes", 'CLAIM:identity_ratify={"name": "Vega"}')
    twice = say("again", 'CLAIM:identity_ratify={"name": "Vega"}')

    identity = open_mind(home).identity()
    assert proposed.identity == ["proposed Vega"]
    assert "later turn" in same_turn.rejections[0]["reason"]
    assert ratified.identity == ["adopted Vega"]
    assert twice.rejections and identity.name == "Vega"
    assert [h["name"] for h in identity.history] == ["Echo", "Vega"]


def test_context_is_bounded_recorded_and_cites_what_was_seen(home: Home, say: Say) -> None:
    for i in range(30):
        open_mind(home).open_commitment(f"promise number {i} " + "padding " * 20)

    outcome = say("what did I promise?", "Many things.", budget=400)

    assert 0 < outcome.context_tokens <= 400
    with read_model(home) as con:
        recorded = con.execute("SELECT context FROM turns").fetchone()
    reader = open_reader(home)  # the event as recorded, its sealed context opened
    try:
        (record,) = reader.open_states(
            [r for r in reader.rows() if r.topic == "mind.turn.completed"]
        )
    finally:
        reader.close()
    assert recorded is not None and '"over the token budget"' not in recorded[0]
    assert "over the token budget" in recorded[0]
    missed = [c for c in record["context"] if "over the token budget" in c["reason"]]
    assert record["context_dropped"] >= len(missed) == min(record["context_dropped"], DROPPED_KEPT)
    assert sum(i["tokens"] for i in outcome.context) <= 400


def test_a_model_swap_changes_neither_identity_nor_commitments_nor_context(
    home: Home, say: Say
) -> None:
    cid = open_mind(home).open_commitment("water the plants").cid
    before = say("what now?", "Water the plants.")

    open_mind(home).set_model("ollama/llama3.2")
    after = say("what now?", "Water the plants.")

    app = open_mind(home)
    assert app.identity().model == "ollama/llama3.2" and app.identity().name == "Echo"
    assert not app.commitment(cid).closed
    assert [(i["kind"], i["id"]) for i in after.context if i["kind"] != "message"] == [
        (i["kind"], i["id"]) for i in before.context if i["kind"] != "message"
    ]
    assert "mind.identity.model_switched" in topics(home)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("status", "delay", "kind"),
    [(401, 0.0, "auth"), (429, 0.0, "rate_limit"), (500, 0.0, "server"), (200, 3.0, "timeout")],
)
def test_provider_failures_append_exactly_one_failure_event(
    home: Home, status: int, delay: float, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_MODEL_TIMEOUT", "1")
    with failing_provider(status, delay) as base:
        model = build_model(home, "openai/fake", api_base=base)
        outcome = turn_service(home).run("hello?", model)

    assert (outcome.status, outcome.failure["kind"] if outcome.failure else None) == (
        "failed",
        kind,
    )
    assert topics(home)[1:] == [
        "mind.turn.started",
        "mind.turn_numbers.given",
        "mind.turn.generation_failed",
    ]


def test_a_refused_connection_is_a_connection_failure(home: Home) -> None:
    model = build_model(home, "openai/fake", api_base=f"http://127.0.0.1:{closed_port()}/v1")

    outcome = turn_service(home).run("anyone there?", model)

    assert outcome.failure is not None and outcome.failure["kind"] == "connection"
    assert topics(home)[1:] == [
        "mind.turn.started",
        "mind.turn_numbers.given",
        "mind.turn.generation_failed",
    ]


def test_a_turn_left_unfinished_by_a_dead_process_is_marked_interrupted_once(
    home: Home, say: Say
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    app = open_mind(home)
    stale = Turn.start("lost words", "user", 1, "mock", dead.pid, socket.gethostname(), app.clock())
    app.save(*stale.collect())

    say("hello", "hi")
    say("hello again", "hi")

    assert topics(home).count("mind.turn.interrupted") == 1
    assert open_mind(home).load(Turn, stale.id).status == "interrupted"


@pytest.mark.parametrize("column_rows", [4, 1])  # lists per column from 4 rows, from 1
def test_replay_needs_no_model_and_matches_the_live_read_model(
    home: Home, say: Say, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, column_rows: int
) -> None:
    from mindledger.projections.engine.readmodel import ensure_fresh
    from mindledger.projections.engine.replay import differences, rebuild

    monkeypatch.setattr("mindledger.projections.engine.projector.COLUMN_ROWS", column_rows)
    say("Remind me to buy milk", "Will do.\nCOMMIT: buy milk")
    say("thanks", "REFLECT: polite user")
    paths: Any = __import__("mindledger.compose", fromlist=["read_model_paths"]).read_model_paths(
        home
    )
    ensure_fresh(paths, open_reader(home))

    with pytest.MonkeyPatch.context() as patch:
        # Turns wrote VALUES rows (JSON, lists, times); the replay writes Arrow batches.
        patch.setattr("mindledger.projections.engine.projector.FEW_ROWS", 0)
        rebuild(tmp_path / "replayed.duckdb", open_reader(home))

    assert differences(paths.published, tmp_path / "replayed.duckdb") == []


def test_a_concept_named_by_its_alias_is_put_in_context(home: Home, say: Say) -> None:
    app = open_mind(home)
    app.define_concept("project.alpha", "The billing rewrite")
    app.alias_concept("project.alpha", "billing rewrite")
    app.define_concept("project.beta", "Something unrelated")

    outcome = say("How is the Billing Rewrite going?", "Slowly.")

    concepts = [(i["source_id"], i["reason"]) for i in outcome.context if i["kind"] == "concept"]
    assert [c[0] for c in concepts] == ["project.alpha"]
    assert "concepts #1: named in the query (billing rewrite)" in concepts[0][1]


def test_a_reply_naming_a_thread_counts_a_mention_and_nothing_else(home: Home, say: Say) -> None:
    from mindledger.domain.thread import short_id

    app = open_mind(home)
    thread = app.open_thread("Why did the import fail?", "It failed on 3 May")

    for _ in range(3):
        say("any news?", f"Still looking into {short_id(thread)}.")

    assert app.thread(thread).mentions == 3
    assert app.thread(thread).last_work_at is None


def test_a_tool_the_runtime_ran_credits_work_and_text_alone_cannot(home: Home) -> None:
    from mindledger.domain.context_port import ToolRun
    from mindledger.domain.thread import short_id

    app = open_mind(home)
    thread = app.open_thread("Flaky test", "test_sync fails one run in ten")
    line = f'Ran it.\nTHREAD-WORK: {short_id(thread)} {{"tool": "pytest"}}'
    model = LiteLLMModel(ModelSettings(spec="mock", mock_reply=line))

    claimed = turn_service(home).run("did you run the tests?", model)
    ran = turn_service(home).run("run them", model, tools=[ToolRun("pytest", "12 passed")])

    assert "no tool 'pytest' ran in this turn" in claimed.rejections[0]["reason"]
    assert ran.rejections == [] and ran.threads == [f"credited {short_id(thread)} for tool:pytest"]
    assert app.thread(thread).last_work_at is not None


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts open files in /proc")
def test_a_closed_turn_service_leaves_no_ledger_connection_open(home: Home, say: Say) -> None:
    def ledger_files() -> int:
        gc.collect()  # what others left unclosed, closed by the collector, is not counted
        opened = []
        for fd in Path("/proc/self/fd").iterdir():
            try:
                opened.append(str(fd.readlink()))
            except OSError:
                continue
        return sum(name.startswith(str(home.ledger)) for name in opened)

    say("warm up", "ok")
    before = ledger_files()
    for i in range(5):
        say(f"turn {i}", "ok")
        with read_model(home) as con:
            con.execute("SELECT count(*) FROM turns").fetchall()

    assert ledger_files() <= before


def test_turns_are_numbered_from_the_ledger_and_the_tracking_row_keeps_position(
    home: Home, say: Say
) -> None:
    numbers = [say(f"message {i}", "ok").seq for i in range(3)]
    # A turn started elsewhere that no read model has applied yet still takes its number.
    with turn_service(home) as service:
        numbers.append(service.start("typed elsewhere", "user", "m").seq)
    numbers.append(say("after it", "ok").seq)

    with read_model(home) as con:
        tracking = con.execute("SELECT position, time FROM tracking").fetchall()
        last = con.execute("SELECT position, time FROM events ORDER BY position DESC LIMIT 1")
        expected = last.fetchall()[0]
    assert numbers == [1, 2, 3, 4, 5]
    assert tracking == [expected]


# 1,000: the catch-up runs beside the message's save; 0: first (a read model far behind).
@pytest.mark.parametrize("beside", [1000, 0])
def test_a_turn_sees_what_came_before_its_message_and_not_the_message(
    home: Home, say: Say, monkeypatch: pytest.MonkeyPatch, beside: int
) -> None:
    monkeypatch.setattr("mindledger.projections.retrieval.turn_reads.BACKGROUND_EVENTS", beside)
    say("The zanzibar quokka expedition starts in May", "Noted.")
    outcome = say("Tell me about the zanzibar quokka expedition", "ok")

    with read_model(home) as con:
        said = dict(
            con.execute("SELECT turn_id, position FROM messages WHERE role = 'user'").fetchall()
        )
    seen = [c["id"] for c in outcome.context]
    assert said[outcome.turn_id.hex] not in seen
    assert len(said) == 2 and set(said.values()) - {said[outcome.turn_id.hex]} <= set(seen)
    assert outcome.seq == 2


def test_a_read_model_that_cannot_catch_up_refuses_the_turn_before_its_message(
    home: Home, say: Say, monkeypatch: pytest.MonkeyPatch
) -> None:
    say("first", "ok")  # its outcome is applied by the next turn, before its message
    before = topics(home)

    def broken(rows: Any, e: Any) -> None:
        raise ValueError("a broken handler")

    monkeypatch.setitem(HANDLERS, "mind.turn.completed", broken)
    with pytest.raises(ProjectionError, match=r"a broken handler.*nothing was written"):
        say("second", "ok")
    refused = topics(home)
    monkeypatch.undo()
    third = say("third", "ok")

    assert refused == before
    assert topics(home).count("mind.turn.started") == 2
    assert third.status == "complete" and third.seq == 2


def test_a_turn_decodes_no_earlier_turns_outcome_to_find_unfinished_turns(
    say: Say, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.adapters.pydantic_mapping import PydanticMapper

    say("Remind me to buy milk", "Will do.")
    decoded: list[str] = []
    to_domain_event = PydanticMapper.to_domain_event

    def recorded(self: PydanticMapper, stored: Any) -> Any:
        decoded.append(stored.topic)
        return to_domain_event(self, stored)

    monkeypatch.setattr(PydanticMapper, "to_domain_event", recorded)

    outcome = say("And eggs", "Noted.")

    assert outcome.status == "complete"
    assert Turn.Completed.TOPIC not in decoded  # the previous turn's last event, its context
