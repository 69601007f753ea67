"""A forget's plan found by lookup in the home's index of what each event names is the plan a
scan of the whole ledger finds, for every selector kind; the index reads only the events written
since it was last caught up, and starts again from 0 when it does not match the ledger."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mindledger
from mindledger.adapters import forget_index
from mindledger.adapters.forget_index import INDEX_FILE, ForgetIndex, plan_by_lookup
from mindledger.adapters.forget_plan import ForgetPlan, plan_forget
from mindledger.compose import Home, open_reader
from mindledger.domain.forgetting import NothingToForgetError, Selector
from tests.e2e.forget_memories import module_cli


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A mind holding turns, knowledge, commitments, a concept, a thread and an imported
    chat, built once for the module; and its first turn's id."""
    made = tmp_path_factory.mktemp("index") / "mind"
    assert module_cli(made)("init", "--name", "Echo").exit_code == 0
    with mindledger.open(made, now="2026-05-01T09:00:00Z") as mind:
        first = mind.turn("The heron nests by the mill", model="mock", mock_reply="Noted.")
        mind.remember("Herons nest by the mill", question="Where do herons nest?")
        mind.commit("Count the herons by the river")
        mind.turn("Where do herons nest?", model="mock", mock_reply="By the mill.")
        mind.remember("The kingfisher is blue")
        mind.turn("And the kingfisher?", model="mock", mock_reply="Blue.")
        mind.define_concept("heron", "A wading bird of rivers")
        mind.turn("Herons?", model="mock", mock_reply="Wading.\nCONCEPT: heron = A grey bird")
        mind.turn("Remind me", model="mock", mock_reply="Will do.\nCOMMIT: Ring the ferryman")
        mind.open_thread("Where herons winter", "They leave the mill in November")
        chat = made.parent / "chat.jsonl"
        chat.write_text(
            '{"role": "user", "content": "The ferry leaves at nine"}\n'
            '{"role": "assistant", "content": "Noted"}\n'
        )
        mind.import_chat(chat, "ferry talk")
    return made, first.turn


@pytest.fixture
def first_turn(built: tuple[Path, str], home: Path) -> str:
    """Each test's own copy of that mind, as its home."""
    shutil.copytree(built[0], home)
    return built[1]


@pytest.fixture
def reader(first_turn: str, home: Path) -> Iterator[Any]:
    """The mind's ledger, read."""
    opened = open_reader(Home(home))
    yield opened
    opened.close()


def same(plan: ForgetPlan) -> tuple[Any, ...]:
    """What two plans of one forget must share (the forget id is new each time)."""
    return (
        dict(plan.counts),
        plan.events,
        plan.keys,
        plan.context_turns,
        sorted(plan.messages),
        plan.first_position,
        plan.key_first,
        plan.unsealed,
    )


def selectors(first_turn: str, home: Path) -> list[Selector]:
    with mindledger.open(home) as mind:
        items = [k.item_id for k in mind.knowledge()]
        cids = [c.cid for c in mind.commitments()]
        threads = [t.id for t in mind.threads()]
        started = [e for e in mind.log(limit=1000) if e.type == "mind.conversation.started"]
        conversations = [e.aggregate for e in started]
    return [
        Selector("turn", first_turn),
        Selector("speaker", "user"),
        Selector("speaker", "assistant"),
        *(Selector("knowledge", str(item)) for item in items),
        *(Selector("commitment", str(cid)) for cid in cids),
        Selector("concept", "heron"),
        *(Selector("thread", str(thread)) for thread in threads),
        *(Selector("conversation", str(c)) for c in conversations[:1]),
    ]


def test_a_plan_by_lookup_is_the_plan_a_scan_finds_for_every_selector(
    reader: Any, first_turn: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = ForgetIndex(home / INDEX_FILE)

    monkeypatch.setattr(forget_index, "SCAN_SHARE", 1.0)  # never a scan: this small mind
    for selector in selectors(first_turn, home):
        looked_up = plan_by_lookup(reader, selector, index)
        scanned = plan_forget(reader, selector, None)

        assert looked_up is not None
        assert same(looked_up) == same(scanned), selector
        assert looked_up.events > 0
    index.close()


def test_a_selector_linking_to_much_of_the_ledger_is_left_to_a_scan(
    reader: Any, home: Path
) -> None:
    index = ForgetIndex(home / INDEX_FILE)

    planned = plan_by_lookup(reader, Selector("speaker", "user"), index)  # most turns' events

    assert planned is None
    index.close()


def test_a_selector_naming_nothing_is_refused_by_lookup_as_by_a_scan(
    reader: Any, home: Path
) -> None:
    index = ForgetIndex(home / INDEX_FILE)

    with pytest.raises(NothingToForgetError):
        plan_by_lookup(reader, Selector("speaker", "nobody-here"), index)
    with pytest.raises(NothingToForgetError):
        plan_by_lookup(reader, Selector("commitment", "c0000000000"), index)
    index.close()


def test_the_index_reads_only_the_events_written_since_it_was_caught_up(
    reader: Any, home: Path
) -> None:
    index = ForgetIndex(home / INDEX_FILE)
    head, _ = reader.head()
    assert index.catch_up(reader) == head

    with mindledger.open(home) as mind:
        mind.remember("The otter swims at dawn")
    later = open_reader(Home(home))
    added = index.catch_up(later)

    assert added == later.head()[0] - head > 0
    assert index.catch_up(later) == 0
    assert index.position() == later.head()
    later.close()
    index.close()


def test_an_index_that_does_not_match_the_ledger_is_made_again_from_0(
    reader: Any, home: Path
) -> None:
    index = ForgetIndex(home / INDEX_FILE)
    head, _ = reader.head()
    index.catch_up(reader)
    with index.conn:  # as if made for another ledger (a home restored from a backup)
        index.conn.execute("UPDATE indexed SET hash = 'not-this-ledger'")

    assert index.catch_up(reader) == head
    assert index.position() == reader.head()
    index.close()


def test_a_damaged_index_file_is_made_again_and_private(reader: Any, home: Path) -> None:
    path = home / INDEX_FILE
    path.write_bytes(b"this is not a SQLite database, only noise" * 100)

    index = ForgetIndex(path)
    index.catch_up(reader)

    assert index.position() == reader.head()
    assert path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(sqlite3.ProgrammingError):
        index.close()
        index.conn.execute("SELECT 1")
