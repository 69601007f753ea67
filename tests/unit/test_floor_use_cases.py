"""Every public `MindLedger` method, called in this process on a home in a temporary folder with
the scripted model (`mock`) standing in for a real one: what each returns is its typed result
and what it writes reads back. Each test names the methods it covers with the `floor` mark;
`test_floor_coverage.py` fails for a method no unit test names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import mindledger
from tests.foreign_files import SMALL_PMM, branching_conversation, pmm_ledger, write_json

NOW = "2026-05-01T09:00:00Z"


@pytest.fixture
def mind(tmp_path: Path) -> Iterator[mindledger.MindLedger]:
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now=NOW)
    with mindledger.open(home, now=NOW) as opened:
        yield opened


@pytest.mark.floor("turn", "run_turn", "turn_events", "turn_prompt", "log", "events_after")
def test_a_turn_is_recorded_and_read_back_event_by_event(mind: mindledger.MindLedger) -> None:
    done = mind.run_turn("Remind me to water the ferns", model="mock", mock_reply="Noted.")
    again = mind.turn("And the cactus?", model="mock", mock_reply="Also noted.")

    own = mind.turn_events(done.outcome.notification_ids)
    prompt = mind.turn_prompt(done.result.turn)
    latest = mind.log(limit=3)
    after = mind.events_after(0, limit=2)

    assert (done.result.reply, again.reply) == ("Noted.", "Also noted.")
    assert "mind.turn.started" in [e.type for e in own]
    assert any("water the ferns" in m["content"] for m in prompt.messages or [])
    assert len(latest) == 3 and latest[-1].position > latest[0].position
    assert [e.position for e in after] == [1, 2]


@pytest.mark.floor("status", "verify", "warm", "close")
def test_status_and_verify_describe_the_ledger_and_a_closed_mind_opens_again(
    mind: mindledger.MindLedger,
) -> None:
    mind.warm()
    mind.commit("Send the weekly report")
    mind.close()

    status = mind.status()
    verified = mind.verify()

    assert status.head.position == verified.events == 2
    assert verified.ok is True and verified.head == status.head.hash


@pytest.mark.floor("commit", "close_commitment", "commitments")
def test_a_commitment_opens_closes_and_is_listed(mind: mindledger.MindLedger) -> None:
    cid = mind.commit("Send the weekly report").cid
    again = mind.commit("Send the weekly report")

    closed = mind.close_commitment(cid, "sent on Friday")

    assert again.opened is False and again.cid == cid
    assert closed.closed is True and closed.reason == "sent on Friday"
    assert [c.status for c in mind.commitments(include_closed=True)] == ["closed"]
    assert list(mind.commitments()) == []


@pytest.mark.floor("define_concept", "alias_concept", "relate_concepts", "bind_concept", "concepts")
def test_concepts_are_defined_aliased_related_and_bound(mind: mindledger.MindLedger) -> None:
    cid = mind.commit("Ship the billing rewrite").cid
    mind.define_concept("project.alpha", "The billing rewrite")
    mind.define_concept("team.billing", "The billing team")

    aliased = mind.alias_concept("project.alpha", "billing rewrite")
    related = mind.relate_concepts("project.alpha", "team.billing", "owned-by")
    bound = mind.bind_concept("project.alpha", commitment=cid)

    assert aliased.added and related.added
    assert (bound.kind, bound.target) == ("commitment", cid)
    assert sorted(c.token for c in mind.concepts()) == ["project.alpha", "team.billing"]


def test_a_binding_names_its_arguments_by_their_request_words(mind: mindledger.MindLedger) -> None:
    mind.define_concept("project.alpha", "The billing rewrite")

    with pytest.raises(mindledger.InvalidInputError) as refused:
        mind.bind_concept("project.alpha")

    assert str(refused.value) == "give exactly one of `commitment`, `thread` or `position`"
    assert refused.value.param == "commitment" and "--" not in str(refused.value)


@pytest.mark.floor("open_thread", "resolve_thread", "threads", "thread_metrics", "thread_triage")
def test_a_thread_opens_resolves_and_the_metrics_count_no_cycles_yet(
    mind: mindledger.MindLedger,
) -> None:
    opened = mind.open_thread("Why did the import fail?", "The nightly import failed.")

    live = mind.threads()
    resolved = mind.resolve_thread(opened.id, "dissolved", reason="the import was retired")
    metrics = mind.thread_metrics()
    triage = mind.thread_triage()

    assert [t.id for t in live] == [opened.id]
    assert resolved.verdict == "dissolved"
    assert [t.status for t in mind.threads(include_resolved=True)] == ["resolved"]
    assert (metrics.live_threads, metrics.cycles, metrics.rho_status) == (0, 0, "PENDING")
    assert triage.demand is None


@pytest.mark.floor("identity", "adopt_name", "current_identity", "model", "set_model", "configure")
def test_the_owner_renames_the_mind_switches_its_model_and_sets_a_setting(
    mind: mindledger.MindLedger,
) -> None:
    adopted = mind.adopt_name("Nova", reason="chosen together")
    switched = mind.set_model("mock")
    changed = mind.configure("threads.cycle_threshold", "3.5")
    unchanged = mind.configure("threads.cycle_threshold", "3.5")

    assert adopted.name == "Nova" and mind.identity().name == "Nova"
    assert switched.model == "mock" and mind.model().model == "mock"
    assert mind.current_identity() == {"name": "Nova", "model": "mock"}
    assert changed.changed is True and unchanged.changed is False


@pytest.mark.floor(
    "remember", "judge", "edit_knowledge", "delete_knowledge", "knowledge", "knowledge_item"
)
def test_the_owner_keeps_verifies_edits_and_deletes_knowledge(mind: mindledger.MindLedger) -> None:
    kept = mind.remember("4471", question="What is the boiler code?")

    verified = mind.judge(kept.id, "verify")
    edited = mind.edit_knowledge(kept.id, "4472")
    shown = mind.knowledge_item(kept.id, history=True)
    deleted = mind.delete_knowledge(kept.id, "moved house")

    assert verified.state == "verified" and edited.revision == 2
    assert shown.item is not None and shown.item.answer == "4472"
    assert deleted.id == kept.id
    assert [k.item_id for k in mind.knowledge()] == []
    assert [k.item_id for k in mind.knowledge(include_deleted=True)] == [kept.id]


@pytest.mark.floor("ask", "approve", "discard")
def test_an_asked_answer_is_approved_or_discarded(mind: mindledger.MindLedger) -> None:
    kept = mind.ask("Who fixed the boiler?", model="mock", mock_reply="Ms Li did.")
    dropped = mind.ask("What colour is the door?", model="mock", mock_reply="Blue.")
    assert kept.turn is not None and dropped.turn is not None

    approved = mind.approve(kept.turn)
    discarded = mind.discard(dropped.turn)
    again = mind.ask("Who fixed the boiler?")

    assert kept.route == "model" and approved.state == "verified"
    assert discarded.state == "retracted"
    assert again.route.startswith("memory") and again.answer == "Ms Li did."


@pytest.mark.floor("recall", "query", "query_table", "report", "report_table")
def test_reads_recall_query_and_report_what_was_recorded(mind: mindledger.MindLedger) -> None:
    mind.commit("Water the ferns on Sunday")

    recalled = mind.recall("ferns", budget=200)
    rows = mind.query("SELECT text FROM commitments")
    table = mind.query_table("SELECT text FROM commitments WHERE text LIKE $w", {"w": "%fern%"})
    report = mind.report("commitments")
    report_table = mind.report_table("activity")

    assert any("ferns" in (i.text or "") for i in recalled.items)
    assert [r["text"] for r in rows] == ["Water the ferns on Sunday"]
    assert (table.columns, table.rows) == (["text"], [("Water the ferns on Sunday",)])
    assert len(report) >= 1 and report_table.columns[:2] == ["day", "type"]


@pytest.mark.floor("report_png", "report_file", "export_tables", "export_graph", "graph_text")
def test_reports_tables_and_the_graph_are_written_to_files(
    mind: mindledger.MindLedger, tmp_path: Path
) -> None:
    mind.commit("Water the ferns on Sunday")

    png = mind.report_png("activity", tmp_path / "activity.png")
    csv = mind.report_file("activity", tmp_path / "activity.csv", "csv", lambda c, r: ",".join(c))
    tables = mind.export_tables(tmp_path / "tables", "csv")
    graph = mind.export_graph(tmp_path / "mind.json", "json")
    text = mind.graph_text("json")

    assert (tmp_path / "activity.png").read_bytes()[:4] == b"\x89PNG" and png.rows is None
    assert (tmp_path / "activity.csv").read_text() == "day,type,events" and csv.format == "csv"
    assert all(Path(f).exists() for f in tables.files) and tables.format == "csv"
    assert json.loads((tmp_path / "mind.json").read_text()) == json.loads(text.text)
    assert graph.nodes >= 1


def test_a_refused_output_path_names_the_argument_not_a_flag(
    mind: mindledger.MindLedger, tmp_path: Path
) -> None:
    (tmp_path / "real").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real")

    with pytest.raises(mindledger.InvalidInputError) as refused:
        mind.export_graph(tmp_path / "link")

    assert str(refused.value).startswith(f"`out` {tmp_path / 'link'} is a symbolic link")
    assert refused.value.param == "out"


@pytest.mark.floor("graph_stats", "graph_neighbors")
def test_the_graph_links_a_concept_to_what_it_is_bound_to(mind: mindledger.MindLedger) -> None:
    cid = mind.commit("Ship the billing rewrite").cid
    mind.define_concept("project.alpha", "The billing rewrite")
    mind.bind_concept("project.alpha", commitment=cid)

    stats = mind.graph_stats()
    near = mind.graph_neighbors("concept:project.alpha")

    assert stats.nodes >= 2
    assert any(n.label == cid or cid in (n.text or "") or n.id.endswith(cid) for n in near)


@pytest.mark.floor("export", "backup")
def test_an_export_and_a_backup_tell_their_progress_and_verify(
    mind: mindledger.MindLedger, tmp_path: Path
) -> None:
    mind.commit("Water the ferns on Sunday")
    told: list[tuple[int, int, str]] = []

    exported = mind.export(tmp_path / "out", "jsonl", progress=lambda *a: told.append(a))
    copied = mind.backup(tmp_path / "copy")
    checked = mindledger.verify_export(exported.file)

    assert told[0] == (0, 2, "exporting jsonl") and told[-1] == (2, 2, "exporting jsonl")
    assert checked.ok is True and checked.head == exported.head == copied.head


@pytest.mark.floor("import_chat", "import_chatgpt", "import_pmm", "import_locomo")
def test_each_import_adds_its_messages_once(mind: mindledger.MindLedger, tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": "Hello from a transcript"}) + "\n")
    chatgpt = write_json(tmp_path / "conversations.json", [branching_conversation()])
    pmm = write_json(tmp_path / "pmm.json", pmm_ledger(SMALL_PMM))  # type: ignore[arg-type]
    conversation = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben"}],
    }
    locomo = write_json(
        tmp_path / "locomo.json", [{"sample_id": "s1", "conversation": conversation}]
    )
    told: list[tuple[int, int, str]] = []

    chats = mind.import_chat(chat)
    chatgpts = mind.import_chatgpt(chatgpt, progress=lambda *a: told.append(a))
    pmms = mind.import_pmm(pmm)
    samples = mind.import_locomo(locomo)
    again = mind.import_chat(chat)

    assert chats.added == 1 and again.added == 0
    assert chatgpts.conversations == 1 and told[0] == (0, told[0][1], "importing")
    assert pmms.added >= 1
    assert [(s.sample, s.added) for s in samples] == [("s1", 1)]


@pytest.mark.floor("project", "replay", "follow")
def test_the_read_models_catch_up_rebuild_and_follow(
    mind: mindledger.MindLedger, tmp_path: Path
) -> None:
    mind.commit("Water the ferns on Sunday")
    told: list[tuple[int, int, str]] = []

    projected = mind.project()
    replayed = mind.replay(tmp_path / "r.duckdb", check=True, progress=lambda *a: told.append(a))
    looks: list[str] = []

    def enough() -> bool:  # one look at the ledger, then stop
        looks.append("look")
        return len(looks) > 1

    stopped = mind.follow(should_stop=enough)

    assert projected.position == 2 and replayed.identical is True and replayed.applied == 2
    assert told[-1] == (2, 2, "projecting")
    assert stopped.position == 2 and stopped.applied == 0 and looks == ["look", "look"]


@pytest.mark.floor("tick", "run_tick")
def test_a_tick_records_its_decision(mind: mindledger.MindLedger) -> None:
    ticked = mind.tick(model="mock", mock_reply="Nothing to do.", now=NOW)
    again = mind.run_tick(model="mock", mock_reply="Still nothing.", now=NOW)

    assert ticked.fired in (True, False) and ticked.reason
    assert again.data["tick"] != ticked.tick


@pytest.mark.floor("chat_turn", "model_for", "owner_write")
def test_a_chat_turn_asks_for_its_model_only_when_it_needs_one(
    mind: mindledger.MindLedger,
) -> None:
    mind.remember("4471", question="What is the boiler code?", state="verified", confidence=0.95)
    asked: list[str] = []

    def model() -> object:
        asked.append("model")
        return mind.model_for("mock", "Noted.", None)

    answered = mind.chat_turn("What is the boiler code?", model)
    modelled = mind.chat_turn("Remind me to call Ana", model)
    home = mind.owner_write(lambda home: home.path)

    assert answered.result.reply == "4471" and modelled.result.reply == "Noted."
    assert asked == ["model"]
    assert home == mind.path


@pytest.mark.floor("forget")
def test_a_forget_before_a_future_time_names_its_request_word(
    mind: mindledger.MindLedger,
) -> None:
    with pytest.raises(mindledger.InvalidInputError) as refused:
        mind.forget("before", "2999-01-01T00:00:00Z")

    assert str(refused.value).startswith("`before` 2999-01-01T00:00:00Z is in the future")
    assert refused.value.param == "value"


@pytest.mark.floor("ask", "forget")
def test_asks_around_forgets_hold_no_replaced_embeddings_file_open(
    mind: mindledger.MindLedger,
) -> None:
    import gc
    import os

    def deleted_caches() -> list[str]:
        links = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                links.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                continue  # the listing's own descriptor, closed by now
        return [link for link in links if "embeddings.sqlite" in link and "(deleted)" in link]

    gc.disable()  # a server may run a long while between collections: closing may not wait
    try:
        for i in range(3):
            mind.ask(f"What did I note on day {i}?", model="mock", mock_reply=f"Item {i}.")
            item = mind.remember(f"fact {i}")
            mind.forget("knowledge", str(item.id))  # replaces embeddings.sqlite
        mind.ask("What did I note on day 9?", model="mock", mock_reply="Item 9.")
        assert deleted_caches() == []
    finally:
        gc.enable()


@pytest.mark.floor("verify")
@pytest.mark.parametrize("head", ["zzz", "", "ab" * 31, "g" * 64])
def test_a_head_that_is_no_hash_is_refused_not_reported_as_a_different_ledger(
    mind: mindledger.MindLedger, head: str
) -> None:
    mind.commit("Water the ferns")

    with pytest.raises(mindledger.InvalidInputError) as refused:
        mind.verify(head=head)

    assert refused.value.param == "head" and "64 hexadecimal digits" in str(refused.value)
    kept = mind.status().head.hash
    assert mind.verify(head=kept.upper()).ok is True  # a kept hash in capitals still matches
