"""The vector channel compares the query with each message in its context (the message's
vector plus `channels.VECTOR_CONTEXT` times its neighbours'), through a plain embedder and
through the vector projection's stored vectors alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mindledger.adapters.importers import import_chat
from mindledger.compose import Home, read_model
from mindledger.projections.retrieval import channels
from mindledger.projections.retrieval.channels import vector_channel
from mindledger.projections.retrieval.recall import NO_LIMIT
from tests.integration.ledger_factory import sqlite_mind

CHAT = [
    ("user", "Did you go hiking in the Alps?"),
    ("assistant", "Yes, last Tuesday!"),
    ("user", "The boiler broke and the plumber came."),
    ("assistant", "We painted the kitchen blue."),
    ("user", "The train to Lisbon leaves at nine."),
]
# Hand-made meanings: a text's vector is the sum of the axes of the words it holds (the
# boiler's message leans a little toward hiking, the reply not at all), plus a small constant.
AXES = {"hiking": 0, "yes": 1, "boiler": 2, "kitchen": 3, "lisbon": 4}
LEAN = {"boiler": {"hiking": 0.2}}
QUERY = "When was the hiking trip?"


def meaning(text: str) -> list[float]:
    v = [0.0] * (len(AXES) + 1)
    v[-1] = 0.01
    for word, axis in AXES.items():
        if word in text.lower():
            v[axis] += 1.0
            for other, weight in LEAN.get(word, {}).items():
                v[AXES[other]] += weight
    return v


def embed(texts: list[str]) -> list[list[float]]:
    """A plain embedder: every text embedded when asked."""
    return [meaning(t) for t in texts]


class StoredFake:
    """The vector projection's port (`latest`, `stored`, `members`) over the same meanings."""

    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return embed(texts)

    def latest(self, kind: str, upto: int, limit: int) -> tuple[list[int], Any]:
        if kind != "message":
            return [], np.zeros((0, 0), dtype=np.float32)
        positions = sorted((p for p in self.texts if p <= upto), reverse=True)[:limit]
        return positions, np.array(embed([self.texts[p] for p in positions]), np.float32)

    def stored(self, kind: str, positions: list[int]) -> tuple[list[int], Any]:
        return positions, np.array(embed([self.texts[p] for p in positions]), np.float32)

    def members(self, firsts: list[int]) -> dict[int, tuple[int, ...]]:
        return {}


@pytest.fixture
def home(tmp_path: Path) -> Home:
    app = sqlite_mind(tmp_path, commands=0)
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(
        "\n".join(json.dumps({"role": role, "content": text}) for role, text in CHAT)
    )
    import_chat(app, transcript)
    return Home(tmp_path)


def similar(home: Home, embedder: Any) -> list[str]:
    with read_model(home) as con:
        found, _, _ = vector_channel(con, QUERY, NO_LIMIT, embedder)
    return [f[2] for f in found]


def stored_fake(home: Home) -> StoredFake:
    with read_model(home) as con:
        rows = con.execute("SELECT position, text FROM messages").fetchall()
    return StoredFake(dict(rows))


def test_a_terse_reply_is_found_by_the_question_it_answers(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(channels, "VECTOR_K", 2)

    found = similar(home, embed)

    assert "hiking in the Alps" in found[0] and "Yes, last Tuesday!" in found[1]


def test_without_context_the_reply_loses_to_a_message_leaning_toward_the_query(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(channels, "VECTOR_K", 2)
    monkeypatch.setattr(channels, "VECTOR_CONTEXT", 0.0)

    found = similar(home, embed)

    assert "hiking in the Alps" in found[0] and "boiler" in found[1]


def test_stored_vectors_choose_what_a_plain_embedder_chooses(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(channels, "VECTOR_K", 3)

    plain = similar(home, embed)
    stored = similar(home, stored_fake(home))

    assert stored == plain and "Yes, last Tuesday!" in stored[1]
