"""The turn protocol without a database: the real TurnService over the in-memory ledger and
fakes of its ports (tests/unit/fakes.py). Every control line, every rejection reason, the
identity proposal/ratify rule and turn numbering."""

from __future__ import annotations

import pytest

from mindledger.domain.application import Mind
from mindledger.domain.context_port import ToolRun
from mindledger.domain.model_port import ModelFailure
from mindledger.domain.turn import Turn
from mindledger.domain.turns import TurnOutcome
from tests.unit.fakes import (
    FakeModel,
    FakeRetrieval,
    FakeThreads,
    FakeWorkspace,
    memory_item,
    turn_service,
)


def topics(app: Mind) -> list[str]:
    return [n.topic for n in app.recorder.select_notifications(1, 10_000)]


def say(app: Mind, reply: str, text: str = "hello", **ports: object) -> TurnOutcome:
    return turn_service(app, **ports).run(text, FakeModel(reply))  # type: ignore[arg-type]


# -- the pipeline ---------------------------------------------------------------------------


def test_the_message_is_saved_with_its_number_and_the_reply_with_its_effects(app: Mind) -> None:
    outcome = say(app, "Will do.\nCOMMIT: buy milk on Friday")

    assert (outcome.status, outcome.seq, outcome.reply) == ("complete", 1, "Will do.")
    assert topics(app)[1:] == [
        "mind.turn.started",
        "mind.turn_numbers.given",
        "mind.turn.replied",
        "mind.commitment.opened",
        "mind.turn.completed",
    ]
    assert app.commitment(outcome.opened[0]).origin == "assistant"


def test_the_context_is_asked_for_before_the_message_is_saved_and_leaves_the_turn_out(
    app: Mind,
) -> None:
    retrieval = FakeRetrieval(app)
    before = app.recorder.max_notification_id()

    outcome = say(app, "ok", "what did I say?", retrieval=retrieval)

    (request, position), *_ = retrieval.requests
    assert position == before
    assert (request.query, request.exclude_turn) == ("what did I say?", outcome.turn_id.hex)


def test_a_failing_model_is_recorded_and_returned(app: Mind) -> None:
    model = FakeModel(failure=ModelFailure("timeout", "no answer in 1 s"))

    outcome = turn_service(app).run("hello?", model)

    assert outcome.status == "failed"
    assert outcome.failure == {"kind": "timeout", "message": "no answer in 1 s"}
    assert topics(app)[-1] == "mind.turn.generation_failed"


def test_a_failing_save_of_the_message_releases_the_context(app: Mind) -> None:
    retrieval = FakeRetrieval(app)

    with pytest.raises(Exception, match="empty"):
        turn_service(app, retrieval=retrieval).run("   ", FakeModel())

    assert retrieval.requests and "mind.turn.started" not in topics(app)


# -- numbers and unfinished turns -----------------------------------------------------------


def test_turns_are_numbered_one_after_another_from_the_ledger(app: Mind) -> None:
    service = turn_service(app)
    started = service.start("typed elsewhere", "user", "m")

    numbers = [started.seq] + [say(app, "ok").seq for _ in range(3)]

    assert numbers == [1, 2, 3, 4]


def test_a_ledger_from_before_numbering_continues_after_its_highest_number(app: Mind) -> None:
    old = Turn.start("from an older release", "user", 7, "m", 1, "h", app.clock())
    app.record(old)

    assert say(app, "ok").seq == 8


def test_a_turn_of_a_dead_process_is_interrupted_once_and_a_live_one_is_left(app: Mind) -> None:
    dead = turn_service(app, pid=41).start("lost", "user", "m")
    alive = turn_service(app, pid=42).start("still thinking", "user", "m")

    say(app, "ok", dead={41})
    say(app, "ok", dead={41})

    assert app.load(Turn, dead.turn.id).status == "interrupted"
    assert app.load(Turn, alive.turn.id).status == "started"
    assert topics(app).count("mind.turn.interrupted") == 1


# -- control lines ----------------------------------------------------------------------------


def test_close_with_evidence_from_the_context_closes_the_commitment(app: Mind) -> None:
    cid = app.open_commitment("call the bank").cid
    retrieval = FakeRetrieval(app, [memory_item(2, "the bank called back")])

    outcome = say(app, f"Done.\nCLOSE: {cid} they called back #2", retrieval=retrieval)

    assert outcome.closed == [cid] and outcome.rejections == []
    assert app.commitment(cid).closed and app.commitment(cid).evidence == [2]


def test_concept_relate_and_reflect_lines_apply(app: Mind) -> None:
    outcome = say(
        app,
        "Noted.\nCONCEPT: user.home = where the user lives\n"
        "CONCEPT: user.groceries = what the user buys\n"
        "RELATE: user.groceries -> part-of -> user.home\nREFLECT: the user likes lists",
    )

    assert outcome.rejections == []
    assert app.concept("user.groceries").relations == [("user.home", "part-of")]
    assert "mind.turn.reflected" in topics(app)


def test_claims_that_check_out_are_accepted(app: Mind) -> None:
    cid = app.open_commitment("water the plants").cid

    outcome = say(
        app,
        f'CLAIM:event_exists={{"id": 1}}\nCLAIM:commitment_status={{"cid": "{cid}", "open": true}}',
    )

    assert [c["type"] for c in outcome.claims] == ["event_exists", "commitment_status"]
    assert topics(app).count("mind.turn.claim_accepted") == 2


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("CLOSE: c0000000000", "unknown CID c0000000000"),
        ("CLOSE: {cid} kept #2", "evidence not retrieved in this turn's context: [2]"),
        ("CLOSE: {cid} kept #4242", "evidence names events that do not exist: [4242]"),
        ("COMMIT: call the bank", "is already open"),
        ("COMMIT: ", "commitment text is empty"),
        ("CLAIM:event_exists={id: 1}", "malformed JSON"),
        ("CLAIM:event_exists=[1]", "must be an object"),
        ('CLAIM:event_exists={"id": 1, "n": NaN}', "malformed JSON: NaN is not a JSON number"),
        ('CLAIM:event_exists={"id": 1, "n": -Infinity}', "-Infinity is not a JSON number"),
        ('CLAIM:event_exists={"id": 1, "n": 1e999}', "1e999 is past a JSON number's range"),
        ('THREAD-WORK: t0000000 {"tool": NaN}', "NaN is not a JSON number"),
        ('CLAIM:weather={"sunny": true}', "unknown claim type 'weather'"),
        ('CLAIM:event_exists={"id": 99999}', "claim is false: there is no event 99999"),
        ('CLAIM:event_exists={"id": 1, "evidence": "#1"}', "evidence must be a list"),
        (
            'CLAIM:commitment_status={"cid": "{cid}", "open": false}',
            "claim is false: {cid} is open",
        ),
        ('CLAIM:commitment_status={"cid": "c0000000000", "open": true}', "unknown CID"),
        ('CLAIM:identity_ratify={"name": "Nova"}', "Nova"),
        ("RELATE: a.b -> rel -> c.d", "concept a.b is not defined"),
        ("RELATE: a.b rel c.d", "RELATE: a -> relation -> b"),
        ("CONCEPT: no equals sign", "CONCEPT: token = definition"),
        ("CLAIM:no-equals", "CLAIM:type={json}"),
    ],
)
def test_each_bad_line_is_a_recorded_rejection_and_its_siblings_still_apply(
    app: Mind, line: str, reason: str
) -> None:
    cid = app.open_commitment("call the bank").cid
    line, reason = line.replace("{cid}", cid), reason.replace("{cid}", cid)

    outcome = say(app, f"Fine.\n{line}\nCOMMIT: keep going")

    assert [r["line"] for r in outcome.rejections] == [line.strip()]
    assert reason in outcome.rejections[0]["reason"]
    assert outcome.opened != [] and app.commitment(outcome.opened[0]).text == "keep going"
    assert topics(app).count("mind.turn.line_rejected") == 1


# -- identity: proposed on one turn, ratified on a later one --------------------------------


def test_a_name_is_ratified_only_on_a_later_turn(app: Mind) -> None:
    same = say(
        app, 'CLAIM:identity_proposal={"name": "Nova"}\nCLAIM:identity_ratify={"name": "Nova"}'
    )
    later = say(app, 'CLAIM:identity_ratify={"name": "Nova"}')

    assert same.identity == ["proposed Nova"] and len(same.rejections) == 1
    assert later.identity == ["adopted Nova"] and later.seq > same.seq
    assert app.identity().name == "Nova"


def test_a_name_proposed_twice_is_rejected(app: Mind) -> None:
    say(app, 'CLAIM:identity_proposal={"name": "Nova"}')

    again = say(app, 'CLAIM:identity_proposal={"name": "Nova"}')

    assert "already proposed" in again.rejections[0]["reason"]


# -- threads --------------------------------------------------------------------------------


def test_a_reply_opens_a_thread_as_the_assistant_whatever_origin_it_claims(app: Mind) -> None:
    outcome = say(
        app,
        'THREAD: {"label": "Why is the build slow?", "content": "It got slow", "origin": "owner"}',
    )

    assert outcome.threads[0].startswith("opened t")
    assert "origin 'owner' is not the model's to claim" in outcome.threads[0]


def test_an_autonomy_turn_opens_threads_as_autonomy(app: Mind) -> None:
    threads = FakeThreads(app)
    service = turn_service(app, threads=threads)

    outcome = service.run(
        "",
        FakeModel('THREAD: {"label": "Check backups", "content": "Are they run?"}'),
        speaker="autonomy",
    )

    assert outcome.rejections == [] and outcome.threads[0].startswith("opened t")
    stream = next(
        s for s in app.recorder.select_notifications(1, 100) if "thread.opened" in s.topic
    )
    assert app.thread(stream.originator_id).origin == "autonomy"


def test_a_second_live_thread_with_the_same_label_is_rejected(app: Mind) -> None:
    threads = FakeThreads(app)
    threads.add(app.open_thread("Why is the build slow?", "It got slow"))

    outcome = say(
        app, 'THREAD: {"label": "why is the build slow?", "content": "again"}', threads=threads
    )

    assert "already holds" in outcome.rejections[0]["reason"]


def work(app: Mind, reply: str, **ports: object) -> tuple[TurnOutcome, str]:
    threads = FakeThreads(app)
    thread = threads.add(app.open_thread("Speed up the build", "The build takes 10 min"))
    ref = "t" + thread.hex[:8]
    outcome = say(app, reply.replace("{t}", ref), threads=threads, **ports)
    return outcome, ref


def test_work_on_a_changed_workspace_file_credits_the_thread(app: Mind) -> None:
    outcome, ref = work(
        app, 'THREAD-WORK: {t} {"file": "build.sh"}', workspace=FakeWorkspace(changed={"build.sh"})
    )

    assert outcome.rejections == [] and outcome.threads == [f"credited {ref} for file:build.sh"]


def test_work_on_a_commitment_closed_with_evidence_in_the_same_turn_credits(app: Mind) -> None:
    cid = app.open_commitment("profile the build").cid
    retrieval = FakeRetrieval(app, [memory_item(2, "profiled: tests take 9 min")])

    outcome, ref = work(
        app,
        f'THREAD-WORK: {{t}} {{"commitment": "{cid}"}}\nCLOSE: {cid} done #2',
        retrieval=retrieval,
    )

    assert outcome.rejections == [] and outcome.threads == [f"credited {ref} for commitment:{cid}"]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ('THREAD-WORK: {t} {"file": "build.sh"}', "no workspace is configured"),
        ('THREAD-WORK: {t} {"commitment": "c0000000000"}', "was not closed with evidence"),
        ('THREAD-WORK: {t} {"tool": "pytest"}', "no tool 'pytest' ran in this turn"),
        ('THREAD-WORK: {t} {"note": "thought hard"}', "THREAD-WORK needs one of"),
        ("THREAD-WORK: {t}", "THREAD-WORK is written"),
        ('THREAD-WORK: tffffffff {"tool": "pytest"}', "no thread 'tffffffff'"),
        ('THREAD-RESOLVE: {t} {"verdict": "answered", "artifact": "#2"}', "not a memory item"),
        ('THREAD-RESOLVE: {t} {"verdict": "superseded", "by": "{t}", "artifact": "#1"}', "itself"),
        ('THREAD-RESOLVE: {t} {"verdict": "dissolved"}', "needs a reason"),
        ('THREAD-RESOLVE: {t} {"reason": "gone"}', 'needs {"verdict"'),
    ],
)
def test_each_unverified_thread_line_is_rejected(app: Mind, reply: str, reason: str) -> None:
    retrieval = FakeRetrieval(app, [memory_item(1, "the mind was created")])

    outcome, _ = work(app, reply, retrieval=retrieval)

    assert reason in outcome.rejections[0]["reason"]
    assert outcome.threads == []


def test_a_tool_the_runtime_ran_credits_one_thread_once(app: Mind) -> None:
    threads = FakeThreads(app)
    thread = threads.add(app.open_thread("Are the tests green?", "CI was red"))
    ref = "t" + thread.hex[:8]
    reply = f'THREAD-WORK: {ref} {{"tool": "pytest"}}\nTHREAD-WORK: {ref} {{"tool": "pytest"}}'

    outcome = turn_service(app, threads=threads).run(
        "run them", FakeModel(reply), tools=[ToolRun("pytest", "12 passed")]
    )

    assert outcome.threads == [f"credited {ref} for tool:pytest"]
    assert "already credited in this turn" in outcome.rejections[0]["reason"]
    assert app.thread(thread).last_work_at is not None


def test_one_artifact_credits_one_thread(app: Mind) -> None:
    threads = FakeThreads(app)
    first = threads.add(app.open_thread("First question", "one"))
    second = threads.add(app.open_thread("Second question", "two"))
    reply = "\n".join(f'THREAD-WORK: t{t.hex[:8]} {{"tool": "pytest"}}' for t in (first, second))

    outcome = turn_service(app, threads=threads).run(
        "run", FakeModel(reply), tools=[ToolRun("pytest")]
    )

    assert "one artifact credits one thread" in outcome.rejections[0]["reason"]


def test_a_resolved_thread_is_frozen(app: Mind) -> None:
    threads = FakeThreads(app)
    thread = threads.add(app.open_thread("Old question", "long ago"))
    app.resolve_thread(thread, "abandoned", reason="moot")

    outcome = say(app, f'THREAD-WORK: t{thread.hex[:8]} {{"tool": "x"}}', threads=threads)

    assert "is resolved; its tension is frozen" in outcome.rejections[0]["reason"]


def test_resolving_with_a_memory_item_as_artifact_answers_the_thread(app: Mind) -> None:
    retrieval = FakeRetrieval(app, [memory_item(1, "the answer")])

    outcome, ref = work(
        app, 'THREAD-RESOLVE: {t} {"verdict": "answered", "artifact": "#1"}', retrieval=retrieval
    )

    assert outcome.threads == [f"resolved {ref} as answered"]


def test_a_mention_counts_but_lowers_no_tension(app: Mind) -> None:
    thread = app.open_thread("Speed up the build", "The build takes 10 min")
    item = memory_item(
        2,
        "[t] Speed up the build: slow",
        kind="thread",
        source_id="t" + thread.hex[:8],
        stream=thread.hex,
    )

    say(app, "About speed up the build: no news.", retrieval=FakeRetrieval(app, [item]))

    assert app.thread(thread).mentions == 1 and app.thread(thread).last_work_at is None


# -- autonomy ticks ---------------------------------------------------------------------------


def test_a_tick_that_never_cycled_fires_and_runs_an_autonomy_turn(app: Mind) -> None:
    service = turn_service(app)

    outcome = service.tick(
        app.clock(), lambda: service.run("", FakeModel("nothing to do"), speaker="autonomy"), None
    )

    assert (outcome.fired, outcome.status, outcome.cycle) == (True, "complete", 1)
    assert topics(app)[-1] == "mind.tick.finished"


def test_a_fired_tick_without_a_model_records_why_and_stops(app: Mind) -> None:
    outcome = turn_service(app).tick(app.clock(), None, "no key")

    assert (outcome.status, outcome.note, outcome.turn) == ("no_model", "no key", None)
    assert "mind.turn.started" not in topics(app)
