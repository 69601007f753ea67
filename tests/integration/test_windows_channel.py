"""Recall's windows channel runs with the vector channel: given an embedder, a window of
consecutive turns close to the query lifts its turns into the fused ranking; without one,
nothing of it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import mindledger
from mindledger.adapters import minilm
from mindledger.compose import read_model
from mindledger.projections.retrieval.recall import gather, rank
from tests.integration.test_spans_channel import NOW, conversation
from tests.unit.test_turn_windows import bag


def test_a_window_close_to_the_query_lifts_its_turns_when_vectors_are_on(tmp_path: Path) -> None:
    home = conversation(tmp_path)

    with read_model(home) as con:
        on = gather(con, "lake kayak", NOW, embed=bag)
        off = gather(con, "lake kayak", NOW)

    windowed = {c.source_id for c in on.items.values() if c.ranks.get("windows") == 1}
    assert {"D1:21", "D1:22", "D1:23"} <= windowed
    assert not any("windows" in c.ranks for c in off.items.values())
    assert any("in window #1" in i.reason for i in rank(on))


def test_a_named_speakers_nearest_messages_come_from_the_stored_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.optional_parts import find

    if not find("embedding-weights").present:
        pytest.skip("the offline embedding weights are not installed (README, install)")
    conversation(tmp_path)
    seen: list[str] = []
    real = minilm.MiniLM.encode

    def spy(self: minilm.MiniLM, texts: list[str], normalise: bool = True) -> Any:
        seen.extend(texts)
        return real(self, texts, normalise)

    with mindledger.open(tmp_path) as mind:
        mind.project(vectors=True)
        monkeypatch.setattr(minilm.MiniLM, "encode", spy)
        query = "Would Ana enjoy paddling on water?"
        items = mind.recall(query, 2000).items

    spoken = [i for i in items if i.channel == "speaker_vector"]
    assert spoken and all("said by Ana" in i.reason for i in spoken)
    assert any("kayak" in i.text or "lake" in i.text for i in spoken[:3])
    assert seen == [query]  # only the query is embedded: the messages' vectors are stored
