"""The offline embedding model (adapters/minilm.py) against sentence-transformers on torch.

tests/data/minilm_reference.json was written once by scripts/minilm_reference.py in a throwaway
venv with torch 2.13.0 and sentence-transformers 6.2.0, from the same model files.
"""

from __future__ import annotations

import json
import math
import sysconfig
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.adapters.minilm import SMALL_ROWS, MiniLM, Weight, erf, model_dir, shared_model

REFERENCE = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "minilm_reference.json").read_text()
)


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return shared_model()


def test_vectors_match_the_sentence_transformers_reference(model: MiniLM) -> None:
    texts = [s["text"] for s in REFERENCE["sentences"]]

    vectors = model.encode(texts)
    pooled = model.encode(texts, normalise=False)

    for ref, v, p in zip(REFERENCE["sentences"], vectors, pooled, strict=True):
        assert np.allclose(v[:8], ref["first8"], atol=2e-5), ref["text"][:40]
        assert math.isclose(float(np.linalg.norm(v)), 1.0, abs_tol=1e-5)
        assert math.isclose(float(np.linalg.norm(p)), ref["pooled_norm"], rel_tol=1e-4)
    assert np.allclose(vectors @ vectors.T, REFERENCE["cosines"], atol=2e-5)


def test_each_text_alone_matches_the_reference_too(model: MiniLM) -> None:
    # Alone, a short text takes the few-rows product (column blocks): the same vectors.
    for ref in REFERENCE["sentences"]:
        vector = model.encode([ref["text"]])[0]

        assert np.allclose(vector[:8], ref["first8"], atol=2e-5), ref["text"][:40]


@pytest.mark.parametrize("rows", [1, 4, SMALL_ROWS, SMALL_ROWS + 1, 300])
def test_a_weight_multiplies_as_its_whole_matrix_does(rows: int) -> None:
    rng = np.random.default_rng(rows)
    matrix = rng.standard_normal((384, 1536), dtype=np.float32)
    x = rng.standard_normal((rows, 384), dtype=np.float32)

    got = Weight(matrix).times(x)

    assert got.shape == (rows, 1536) and got.dtype == np.float32
    if rows > SMALL_ROWS:  # a batch: the very product it was before the blocks
        assert np.array_equal(got, x @ matrix)
    else:
        assert np.allclose(got, x @ matrix, rtol=1e-5, atol=1e-4)


def test_a_text_longer_than_256_tokens_is_cut_as_the_reference_cuts_it(model: MiniLM) -> None:
    long = max(REFERENCE["sentences"], key=lambda s: len(s["text"]))
    assert len(model.tokenizer.encode(long["text"] * 2).ids) == 256

    vector = model.encode([long["text"]])[0]

    assert np.allclose(vector[:8], long["first8"], atol=2e-5)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(model: MiniLM) -> None:
    a, paraphrase, unrelated = model.encode(
        [
            "How do I reset my password?",
            "What are the steps to change my login password?",
            "The tide comes in twice a day.",
        ]
    )

    assert a @ paraphrase > 0.6 > 0.2 > a @ unrelated


def test_a_batch_gives_each_text_the_vector_it_gets_alone(model: MiniLM) -> None:
    texts = ["short", "a somewhat longer sentence about a dog in a park", "", "¿Qué es MCMA?"]

    together = model.encode(texts)
    alone = np.stack([model.encode([t])[0] for t in texts])

    assert np.allclose(together, alone, atol=1e-5)
    assert model.encode([]).shape == (0, 384)


def test_texts_embedded_by_threads_at_once_get_the_vectors_a_lone_call_gives(
    model: MiniLM,
) -> None:
    # A served mind embeds queries on several threads; a text's vector must not depend on what
    # else the process embeds meanwhile (two passes at once gave different last bits).
    batches = [
        [f"line {i} about the weather in Lisbon, take {n}" for i in range(40)] for n in (1, 2)
    ]
    alone = [model.encode(b) for b in batches]
    threads_before = model.blas.select(user_api="blas").info()
    results: list[list[np.ndarray]] = [[], []]

    def embed(which: int) -> None:
        for _ in range(4):
            results[which].append(model.encode(batches[which]))

    workers = [threading.Thread(target=embed, args=(w,)) for w in (0, 1)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert all(np.array_equal(v, alone[w]) for w in (0, 1) for v in results[w])
    assert model.blas.select(user_api="blas").info() == threads_before


def test_the_model_loads_from_site_packages() -> None:
    folder = model_dir()

    # Resolved: a virtual environment reached through a symbolic link names one folder twice.
    assert folder.resolve().is_relative_to(Path(sysconfig.get_paths()["purelib"]).resolve())
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()


@given(st.floats(min_value=-8, max_value=8, allow_nan=False))
def test_erf_is_within_its_published_error_bound(x: float) -> None:
    got = float(erf(np.array([x], dtype=np.float64))[0])

    assert abs(got - math.erf(x)) < 2e-7
