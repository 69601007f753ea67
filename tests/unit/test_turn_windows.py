"""Recall's windows channel (projections/retrieval/turn_windows.py): how messages are cut into
windows, and which windows lift their messages, with a word-counting stand-in for the model."""

from __future__ import annotations

import re
import zlib
from datetime import UTC, datetime, timedelta

import numpy as np

from mindledger.projections.retrieval import turn_windows
from mindledger.projections.retrieval.speakers import nearest_said_by
from mindledger.projections.retrieval.turn_windows import cut, sessions, window_channel
from mindledger.projections.retrieval.vectors import vectors_of

DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def bag(texts: list[str]) -> list[list[float]]:
    """A vector per text: its words counted into 64 buckets."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for n, text in enumerate(texts):
        for word in re.findall(r"[a-z]+", text.lower()):
            out[n, zlib.crc32(word.encode()) % 64] += 1
    return out.tolist()


def said(n: int, text: str, at: datetime = DAY, conv: str = "c1") -> tuple[object, ...]:
    return (100 + n, ("Ana", "Ben")[n % 2], at, text, f"D1:{n + 1}", conv)


def test_sessions_break_at_a_new_conversation_or_a_long_gap() -> None:
    later = DAY + turn_windows.SESSION_GAP + timedelta(seconds=1)
    rows = [said(0, "a"), said(1, "b"), said(2, "c", later), said(3, "d", later, "c2")]

    assert sessions(rows) == [[0, 1], [2], [3]]


def test_windows_overlap_inside_a_session_and_read_date_then_name_and_text() -> None:
    rows = [said(n, f"turn {n}") for n in range(12)]

    windows = cut(rows)

    step = turn_windows.WINDOW_SIZE - turn_windows.WINDOW_OVERLAP
    assert [w.members[0] for w in windows] == list(range(0, 12 - turn_windows.WINDOW_OVERLAP, step))
    assert windows[0].text.splitlines() == ["8 May 2023"] + [
        f"{('Ana', 'Ben')[n % 2]}: turn {n}" for n in range(turn_windows.WINDOW_SIZE)
    ]
    assert windows[-1].members[-1] == 11


def test_the_closest_window_lifts_every_message_in_it_at_its_rank() -> None:
    filler = [said(n, f"we spoke of weather number {n}") for n in range(30)]
    rows = [
        *filler[:12],
        said(12, "I went to the lake"),
        said(13, "bought a red kayak"),
        *filler[14:],
    ]
    query = vectors_of(bag, ["lake kayak"])[0]

    found, ranks = window_channel(rows, query, bag)

    first = [
        f[0] for f, r in zip(found, ranks, strict=True) if r == 1 + turn_windows.WINDOW_PENALTY
    ]
    assert {112, 113} <= set(first)
    assert len(set(f[0] for f in found)) == len(found)


def test_a_truncated_first_session_is_left_out_unless_it_is_the_only_one() -> None:
    later = DAY + timedelta(days=1)
    rows = [
        said(n, "lake kayak" if n < 3 else "other words", DAY if n < 6 else later)
        for n in range(12)
    ]
    query = vectors_of(bag, ["lake kayak"])[0]

    whole = {f[0] for f in window_channel(rows, query, bag)[0]}
    cut_off = {f[0] for f in window_channel(rows, query, bag, truncated=True)[0]}
    alone = {f[0] for f in window_channel(rows[:6], query, bag, truncated=True)[0]}

    assert 100 in whole and cut_off == {106 + n for n in range(6)} and 100 in alone


def test_the_named_speakers_messages_closest_in_meaning_come_first() -> None:
    texts = {100: "weather again", 102: "I love the lake", 104: "more weather"}
    query = vectors_of(bag, ["love lake"])[0]

    best = nearest_said_by(list(texts), query, vectors_of(bag, list(texts.values())))

    assert best[0][0] == 102 and best[0][1] > best[1][1]
    assert nearest_said_by([], query, vectors_of(bag, ["x"])) == []
