"""Each of the floor's use cases through the Python API, on a real home: what it returns is a
typed result whose JSON is what the command's `--json` documents, and what it writes can be
read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mindledger


@pytest.fixture
def made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MIND_NOW", "2026-05-01T09:00:00Z")
    monkeypatch.setenv("MIND_NO_SERVER", "1")
    home = tmp_path / "mind"
    created = mindledger.init(home, name="Echo")
    assert created.name == "Echo"
    return home


def test_init_refuses_a_home_that_already_holds_a_mind(made: Path) -> None:
    with pytest.raises(mindledger.MindError, match="already holds a mind"):
        mindledger.init(made, name="Other")


def test_the_direct_commands_change_what_the_listings_show(made: Path) -> None:
    with mindledger.open(made) as mind:
        mind.define_concept("project.alpha", "The billing rewrite")
        mind.define_concept("team.billing", "The billing team")
        alias = mind.alias_concept("project.alpha", "billing rewrite")
        relation = mind.relate_concepts("project.alpha", "team.billing", "owned-by")
        opened = mind.open_thread("Why did the import fail?", "The nightly import failed.")
        resolved = mind.resolve_thread(opened.id, "dissolved", reason="the import was retired")
        adopted = mind.adopt_name("Nova", reason="chosen together")
        cid = mind.commit("Send the weekly report").cid
        closed = mind.close_commitment(cid, "sent")

        concepts = {c.token for c in mind.concepts()}
        threads = mind.threads(include_resolved=True)
        commitments = mind.commitments(include_closed=True)
        identity = mind.identity()

    assert alias.added is True and relation.added is True
    assert concepts == {"project.alpha", "team.billing"}
    assert resolved.verdict == "dissolved"
    assert [t.status for t in threads if t.id == opened.id] == ["resolved"]
    assert adopted.name == "Nova" and identity.name == "Nova"
    assert closed.closed is True
    assert [c.status for c in commitments if c.cid == cid] == ["closed"]


def test_the_owner_decides_on_knowledge_and_on_a_turns_answer(made: Path) -> None:
    with mindledger.open(made) as mind:
        kept = mind.remember("4471", question="What is the boiler code?")
        verified = mind.judge(kept.id, "verify")
        edited = mind.edit_knowledge(kept.id, "4472")
        shown = mind.knowledge_item(kept.id, history=True)
        asked = mind.ask("Who fixed the boiler?", model="mock", mock_reply="Ms Li did.")
        assert asked.turn is not None
        approved = mind.approve(asked.turn)
        deleted = mind.delete_knowledge(kept.id, "moved house")
        listed = mind.knowledge(include_deleted=True)

    assert verified.state == "verified"
    assert edited.revision == 2 and shown.item is not None and shown.item.answer == "4472"
    assert shown.history is not None and len(shown.history) >= 3
    assert asked.route == "model" and asked.stored
    assert approved.state == "verified"
    assert deleted.id == kept.id
    assert {k.item_id for k in listed} >= {kept.id, approved.id}


def test_a_discarded_answer_is_retracted(made: Path) -> None:
    with mindledger.open(made) as mind:
        asked = mind.ask("What colour is the door?", model="mock", mock_reply="Blue.")
        assert asked.turn is not None
        discarded = mind.discard(asked.turn)

    assert discarded.confidence_ppm == 0


def test_a_tick_is_recorded_and_the_read_models_rebuild_alike(made: Path) -> None:
    with mindledger.open(made) as mind:
        mind.commit("Send the weekly report", concepts=[])
        mind.define_concept("report.weekly", "The Friday report")
        ticked = mind.tick(model="mock", mock_reply="Nothing to do.")
        projected = mind.project()
        replayed = mind.replay(made.parent / "scratch.duckdb", check=True)
        report = mind.report("activity")
        stats = mind.graph_stats()

    assert ticked.fired is True and ticked.turn is not None
    assert ticked.turn.reply == "Nothing to do."
    assert projected.position >= 1
    assert replayed.identical is True
    assert report
    assert stats.nodes >= 1


def test_the_model_is_shown_and_set(made: Path) -> None:
    with mindledger.open(made) as mind:
        before = mind.model()
        changed = mind.set_model("openai/gpt-4o-mini")
        after = mind.model()

    assert before.model != "openai/gpt-4o-mini"
    assert changed.model_dump(mode="json") == {"model": "openai/gpt-4o-mini"}
    assert after.model == "openai/gpt-4o-mini"


def test_imports_add_messages_recall_finds(made: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "The heron nests by the old mill."},
        {"role": "assistant", "content": "Noted: the old mill."},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))

    with mindledger.open(made) as mind:
        imported = mind.import_chat(transcript)
        found = mind.recall("heron mill")

    assert imported.added == 2
    assert any("heron" in item.text for item in found.items)


def test_an_export_becomes_the_same_mind_elsewhere(made: Path, tmp_path: Path) -> None:
    with mindledger.open(made) as mind:
        mind.commit("Water the plants")
        exported = mind.export(tmp_path / "backup")
        head = mind.status().head

    copied = mindledger.import_ledger(exported.file, tmp_path / "copy")
    with mindledger.open(tmp_path / "copy") as copy:
        status = copy.status()
        verified = copy.verify()

    assert copied.head == head.hash
    assert status.head == head
    assert verified.ok is True
