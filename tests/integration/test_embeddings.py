"""The offline embedding model behind LiteLLM, its cache, and recall's vector channel."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from adapters.embeddings import EmbeddingError, LiteLLMEmbedder, register_local_provider
from adapters.importers import import_chat
from adapters.litellm_model import import_litellm
from adapters.minilm import shared_model
from cli.compose import Home, embedder, embedding_model, read_model
from domain.settings import DEFAULT_EMBEDDING_MODEL
from projections.retrieval.bm25 import lexical
from projections.retrieval.recall import NO_LIMIT, gather
from projections.retrieval.vectors import nearest
from tests.conftest import Result
from tests.integration.ledger_factory import sqlite_mind

NOW = datetime(2026, 5, 2, tzinfo=UTC)
LINES = [
    "My sister adopted a golden retriever puppy",
    "We painted the kitchen blue last weekend",
    "The train to Lisbon leaves at nine",
]


def test_litellm_embeds_with_the_local_model_through_our_provider() -> None:
    litellm = import_litellm()
    register_local_provider(litellm)

    response = litellm.embedding(model=DEFAULT_EMBEDDING_MODEL, input=LINES[:2])

    vectors = np.array([d["embedding"] for d in sorted(response.data, key=lambda d: d["index"])])
    assert vectors.shape == (2, 384)
    assert np.allclose(vectors, shared_model().encode(LINES[:2]), atol=1e-6)


def test_an_unknown_local_embedding_model_is_one_clear_error(tmp_path: Path) -> None:
    embed = LiteLLMEmbedder("local/no-such-model", tmp_path / "e.sqlite")

    with pytest.raises(EmbeddingError, match="local/all-minilm-l6-v2"):
        embed(["hello"])


def test_each_text_is_embedded_once_and_the_cache_outlives_the_process(tmp_path: Path) -> None:
    first = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite")

    a = first.matrix([LINES[0], LINES[1], LINES[0]])
    b = first.matrix([LINES[1], LINES[2]])
    again = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite")
    c = again([LINES[2], LINES[0]])

    assert first.embedded == 3 and first.calls == 2
    assert again.calls == 0
    assert np.array_equal(a[0], a[2]) and np.array_equal(a[1], b[0])
    assert np.allclose(c, [b[1], a[0]])


def test_embedding_needs_no_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> None:
        raise OSError("network use in an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite")

    vectors = embed(["offline, from site-packages"])

    assert len(vectors) == 1 and len(vectors[0]) == 384


def test_nearest_finds_the_question_asked_in_other_words(tmp_path: Path) -> None:
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite")
    questions = ["What is the capital of France?", "How do I reset my password?", "Who won?"]

    found = nearest(embed, "Which city is France's capital?", questions, k=2)

    assert found[0].item == 0
    assert found[0].score > 0.78 and len(found) == 2
    assert nearest(embed, "capital of France", questions, k=3, floor=0.99) == []
    assert nearest(embed, "anything", [], k=3) == []


def mind_with(tmp_path: Path, lines: list[str]) -> Path:
    app = sqlite_mind(tmp_path, commands=0)
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(
        "\n".join(json.dumps({"role": "user", "content": line}) for line in lines)
    )
    import_chat(app, transcript)
    return tmp_path


def test_the_vector_channel_finds_a_paraphrase_that_bm25_misses(tmp_path: Path) -> None:
    home = mind_with(tmp_path, LINES)
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "embeddings.sqlite")
    query = "Which dog did her sibling get?"

    with read_model(Home(home)) as con:
        words = lexical(con, query, NO_LIMIT)
        pool = gather(con, query, NOW, embed=embed)

    by_vector = sorted(
        (c for c in pool.items.values() if "vector" in c.ranks), key=lambda c: c.ranks["vector"]
    )
    assert words == []
    assert "golden retriever" in by_vector[0].text
    assert by_vector[0].reasons["vector"].startswith("similarity 0.")


def test_the_offline_model_is_the_default_and_recall_leaves_it_off(
    mind_home: Path, cli: Callable[..., Result]
) -> None:
    shown = cli("config", "show").output
    bad = cli("config", "set", "embedding.recall", "sometimes")

    assert DEFAULT_EMBEDDING_MODEL in shown and "embedding.recall" in shown
    assert bad.exit_code == 1 and "on or off" in bad.stderr
    assert embedder(Home(mind_home), {}) is None
    model = embedding_model(Home(mind_home), {})
    assert model is not None and model.model == DEFAULT_EMBEDDING_MODEL
    assert embedding_model(Home(mind_home), {"embedding.model": "off"}) is None
    assert embedder(Home(mind_home), {"embedding.recall": "on"}) is not None
