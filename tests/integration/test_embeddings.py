"""The offline embedding model behind LiteLLM, its cache, and recall's vector channel."""

from __future__ import annotations

import hashlib
import json
import socket
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mindledger.adapters.embeddings import (
    EmbeddingError,
    LiteLLMEmbedder,
    forget_cached,
    register_local_provider,
)
from mindledger.adapters.importers import import_chat
from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.litellm_model import import_litellm
from mindledger.adapters.minilm import shared_model
from mindledger.compose import Home, embedder, embedding_model, read_model
from mindledger.domain.errors import MindError
from mindledger.domain.settings import DEFAULT_EMBEDDING_MODEL
from mindledger.domain.text_keys import TextKeys
from mindledger.projections.retrieval.bm25 import lexical
from mindledger.projections.retrieval.recall import NO_LIMIT, gather
from mindledger.projections.retrieval.vectors import nearest
from tests.conftest import Result
from tests.integration.ledger_factory import sqlite_mind

NOW = datetime(2026, 5, 2, tzinfo=UTC)
# One mind's keyed hashes: the cache's row keys (shared by the embedders of a test).
KEYS = TextKeys(MemoryKeyStore())
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
    embed = LiteLLMEmbedder("local/no-such-model", tmp_path / "e.sqlite", KEYS)

    with pytest.raises(EmbeddingError, match="local/all-minilm-l6-v2"):
        embed(["hello"])


def test_each_text_is_embedded_once_and_the_cache_outlives_the_process(tmp_path: Path) -> None:
    first = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite", KEYS)

    a = first.matrix([LINES[0], LINES[1], LINES[0]])
    b = first.matrix([LINES[1], LINES[2]])
    again = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite", KEYS)
    c = again([LINES[2], LINES[0]])

    assert first.embedded == 3 and first.calls == 2
    assert again.calls == 0
    assert np.array_equal(a[0], a[2]) and np.array_equal(a[1], b[0])
    assert np.allclose(c, [b[1], a[0]])


def test_forgetting_texts_deletes_their_vectors_and_every_byte_of_their_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, path, KEYS)
    vectors = embed.matrix(LINES)
    forgotten = {
        embed.text_key(t): v.tobytes() for t, v in zip(LINES[:2], vectors[:2], strict=True)
    }
    before = path.read_bytes()
    assert all(k.encode() in before and v in before for k, v in forgotten.items())

    gone = embed.forget(LINES[:2])

    after = path.read_bytes()
    assert gone == 2
    assert not any(k.encode() in after or v in after for k, v in forgotten.items())
    assert embed.text_key(LINES[2]).encode() in after and vectors[2].tobytes() in after
    embed.matrix(LINES)  # asked again, they are embedded again: nothing was left to answer
    assert embed.embedded == len(LINES) + 2


def test_the_cache_keys_rows_by_a_keyed_hash_and_forgets_without_an_embedder(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, path, KEYS)
    other = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "other.sqlite", TextKeys(None))
    embed([LINES[0]])
    embed.cache.close()

    gone = forget_cached(path, KEYS, [LINES[0], "never embedded"])

    plain = hashlib.sha256(LINES[0].encode()).hexdigest()
    assert gone == 1
    assert embed.text_key(LINES[0]) != plain
    assert plain.encode() not in path.read_bytes()
    assert forget_cached(tmp_path / "none.sqlite", KEYS, LINES) == 0
    with pytest.raises(MindError, match="no key store"):
        other([LINES[0]])


def test_a_cache_of_unkeyed_hashes_is_emptied_once(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    with sqlite3.connect(path) as old:
        old.execute(
            "CREATE TABLE vectors (model TEXT, key TEXT, vector BLOB, PRIMARY KEY (model, key))"
        )
        plain = hashlib.sha256(LINES[0].encode()).hexdigest()
        old.execute(
            "INSERT INTO vectors VALUES (?, ?, ?)", (DEFAULT_EMBEDDING_MODEL, plain, b"x" * 64)
        )
    old.close()

    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, path, KEYS)
    embed([LINES[1]])
    again = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, path, KEYS)

    assert again.cache.execute("SELECT key FROM vectors").fetchall() == [
        (embed.text_key(LINES[1]),)
    ]
    assert plain.encode() not in path.read_bytes()


def test_embedding_needs_no_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> None:
        raise OSError("network use in an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite", KEYS)

    vectors = embed(["offline, from site-packages"])

    assert len(vectors) == 1 and len(vectors[0]) == 384


def test_nearest_finds_the_question_asked_in_other_words(tmp_path: Path) -> None:
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite", KEYS)
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
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "embeddings.sqlite", KEYS)
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


@pytest.mark.parametrize(
    "query",
    # Punctuation, a zero-width space (the model sees an empty text) and emoji (unknown tokens
    # to it) hold no word either.
    ["", "   ", "\n\t", "?!", "...", "\u200b", "\U0001f382 \U0001f389"],
)
def test_a_query_without_words_finds_nothing_by_meaning(tmp_path: Path, query: str) -> None:
    # The nearest messages to an empty text are arbitrary: a recall of nothing (a turn whose
    # message is only tool results) gets no meaning channel's picks, and no embedding.
    home = mind_with(tmp_path, LINES)
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        raise AssertionError("embedded for a query without words")

    with read_model(Home(home)) as con:
        pool = gather(con, query, NOW, embed=embed)

    meant = ("vector", "windows", "speaker_vector")
    assert calls == []
    assert not [c for c in pool.items.values() if any(m in c.ranks for m in meant)]


def test_the_offline_model_is_the_default_and_recall_uses_it_once_items_are_embedded(
    mind_home: Path, cli: Callable[..., Result]
) -> None:
    shown = cli("config", "show").output
    bad = cli("config", "set", "embedding.recall", "sometimes")

    assert DEFAULT_EMBEDDING_MODEL in shown and "embedding.recall" in shown
    assert bad.exit_code == 2 and "on or off" in bad.stderr
    assert embedder(Home(mind_home), {}) is None  # nothing embedded yet: no query embedded
    model = embedding_model(Home(mind_home), {})
    assert model is not None and model.model == DEFAULT_EMBEDDING_MODEL
    assert embedding_model(Home(mind_home), {"embedding.model": "off"}) is None
    assert cli("remember", "4471", "--question", "What is the boiler code?").exit_code == 0
    assert cli("project", "--vectors").exit_code == 0
    assert embedder(Home(mind_home), {}) is not None
    assert embedder(Home(mind_home), {"embedding.recall": "off"}) is None


def test_the_offline_model_is_called_here_with_the_vectors_litellms_local_provider_gives(
    tmp_path: Path,
) -> None:
    litellm = import_litellm()
    register_local_provider(litellm)
    response = litellm.embedding(model=DEFAULT_EMBEDDING_MODEL, input=LINES)
    through_litellm = [
        list(map(float, d["embedding"])) for d in sorted(response.data, key=lambda d: d["index"])
    ]
    embed = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, tmp_path / "e.sqlite", KEYS)

    here = embed(LINES)

    # The same vectors, up to float32's last bits: the embedder batches its texts in the order
    # of their keyed hashes (a key per store), and a row's last bits depend on its place in a
    # batch (these three texts in another order: up to 9e-8 apart), so exact equality held in
    # two of three processes. A different model or input would differ by 1e-2 and more.
    assert np.allclose(here, through_litellm, rtol=0, atol=1e-6)
    assert (embed.calls, embed.embedded) == (1, 3)
