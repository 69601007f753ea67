"""Windows of consecutive messages in the vector projection (kind `window`, keyed by the first
message): embedded as the messages are, grown at the head, never on a turn's path (recall
compares only the query with them), dropped by a forget when they hold a forgotten message,
rebuilt from 0 the same."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import mindledger
from mindledger.adapters import minilm
from mindledger.adapters.vector_store import FILE
from mindledger.compose import Home, read_model
from mindledger.projections.retrieval.turn_windows import cut
from mindledger.projections.retrieval.vector_items import window_rows
from mindledger.vector_projection import catch_up
from tests.unit.vector_minds import mind_saying, spy_on_encode

CANARY = "The vault combination is canary-7731 behind the lighthouse painting."
LINES = [
    "My sister adopted a golden retriever puppy last spring.",
    "The boiler broke on Tuesday and the plumber came.",
    CANARY,
    "We hiked in the Alps and slept in a mountain hut.",
    "I started learning the cello in October.",
    "Our neighbours repainted their fence green.",
    "The library moved to the old train station.",
]


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


def windows(home: Path) -> dict[int, tuple[tuple[int, ...], bytes]]:
    """The stored windows: members and vector by first position."""
    con = sqlite3.connect(home / FILE)
    try:
        rows = con.execute(
            "SELECT w.position, w.members, i.vector FROM windows w JOIN items i "
            "ON i.kind = 'window' AND i.position = w.position"
        ).fetchall()
        assert len(rows) == con.execute("SELECT count(*) FROM windows").fetchone()[0]
        assert (
            len(rows)
            == con.execute("SELECT count(*) FROM items WHERE kind = 'window'").fetchone()[0]
        )
    finally:
        con.close()
    return {int(p): (tuple(int(m) for m in ms.split(",")), bytes(v)) for p, ms, v in rows}


def expected(home: Path) -> dict[int, tuple[tuple[int, ...], str]]:
    """The windows a cut of every message in the read model gives, with their texts."""
    with read_model(Home(home)) as con:
        rows = window_rows(con, 0, 2**62)
    return {
        rows[w.members[0]][0]: (tuple(rows[i][0] for i in w.members), w.text) for w in cut(rows)
    }


def vector_of(text: str) -> np.ndarray:
    return np.asarray(minilm.shared_model().encode([text])[0], dtype=np.float32)


def same_windows(home: Path) -> None:
    stored, wanted = windows(home), expected(home)
    assert {p: m for p, (m, _) in stored.items()} == {p: m for p, (m, _) in wanted.items()}
    for p, (_, text) in wanted.items():
        got = np.frombuffer(stored[p][1], dtype=np.float32)
        assert np.allclose(got, vector_of(text), atol=1e-4)


@pytest.mark.floor("project")
def test_windows_are_embedded_with_the_messages_and_the_head_window_grows(
    mind: mindledger.MindLedger, encoded: list[str]
) -> None:
    done = mind.project(vectors=True).vectors
    assert done is not None and done.embedded == 2 * len(LINES)
    assert done.windows == len(windows(mind.path)) == 3  # 14 messages: 0-5, 5-10, 10-13
    same_windows(mind.path)
    first = min(windows(mind.path))
    full = windows(mind.path)[first]

    encoded.clear()
    mind.turn("One more thing about the cello.", model="mock", mock_reply="Noted.")
    again = mind.project(vectors=True).vectors

    # 16 messages: the head window 10-13 grows to 10-15; the closed ones stay as they were.
    assert again is not None and again.embedded == 2 and again.windows == 1
    assert encoded[0] == "One more thing about the cello."  # the turn's query
    assert len(encoded) == 1 + 3  # then the projection's: two messages, one window
    same_windows(mind.path)
    assert windows(mind.path)[first] == full  # a closed window is never embedded again


def test_windows_embedded_a_few_items_at_a_time_are_those_of_a_rebuild(
    mind: mindledger.MindLedger,
) -> None:
    home = Home(mind.path)
    while catch_up(home, limit=3)["embedded"]:
        pass
    step_by_step = windows(mind.path)
    same_windows(mind.path)

    catch_up(home, rebuild=True)

    rebuilt = windows(mind.path)
    assert {p: m for p, (m, _) in rebuilt.items()} == {p: m for p, (m, _) in step_by_step.items()}
    for p, (_, vector) in rebuilt.items():
        assert np.allclose(
            np.frombuffer(vector, np.float32),
            np.frombuffer(step_by_step[p][1], np.float32),
            atol=1e-4,
        )


@pytest.mark.floor("project")
def test_recall_reads_the_stored_windows_and_embeds_only_the_query(
    mind: mindledger.MindLedger, encoded: list[str]
) -> None:
    mind.project(vectors=True)
    encoded.clear()

    recalled = mind.recall("Who learns an instrument?", 2000)

    assert encoded == ["Who learns an instrument?"]
    lifted = [i for i in recalled.items if "in window #" in i.reason]
    assert lifted and any("cello" in i.text for i in lifted)


def test_the_rebuild_embeds_the_same_windows_again(mind: mindledger.MindLedger) -> None:
    mind.project(vectors=True)
    before = windows(mind.path)

    again = mind.project(rebuild_vectors=True).vectors

    assert again is not None and again.windows == len(before)
    after = windows(mind.path)
    assert {p: m for p, (m, _) in after.items()} == {p: m for p, (m, _) in before.items()}


def test_a_forget_drops_every_window_that_held_the_forgotten_message(
    mind: mindledger.MindLedger, turns: list[str]
) -> None:
    mind.project(vectors=True)
    before = windows(mind.path)
    said = {p for m, _ in expected(mind.path).values() for p in m}

    mind.forget("turn", turns[2])  # the canary and its reply

    gone = said - {p for m, _ in expected(mind.path).values() for p in m}
    assert len(gone) == 2
    held = {p: v for p, (m, v) in before.items() if gone & set(m)}
    assert held  # the canary was in a window
    after = windows(mind.path)
    assert after  # the windows without it stay
    assert all(not gone & set(m) for m, _ in after.values())
    assert set(after) == set(before) - set(held)
    raw = b"".join(p.read_bytes() for p in mind.path.glob(f"{FILE}*"))
    assert all(vector not in raw for vector in held.values())  # no page holds their vectors

    mind.project(vectors=True)  # the next pass cuts the windows again without it

    same_windows(mind.path)
    texts = [text for _, text in expected(mind.path).values()]
    assert texts and all("canary" not in text for text in texts)
    stored = [np.frombuffer(v, np.float32) for _, v in windows(mind.path).values()]
    for vector in held.values():
        old = np.frombuffer(vector, np.float32)
        assert all(not np.allclose(old, s, atol=1e-4) for s in stored)
