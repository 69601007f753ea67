"""Embeddings benchmark: the offline all-MiniLM-L6-v2 (adapters/minilm.py) and semantic lookup.

- load: importing and loading the model (once per process);
- throughput, sentences/s: a batch (the forward pass alone, and through LiteLLM and the cache in
  batches of 128) and one sentence at a time (alone, and through LiteLLM);
- semantic lookup over 10,000 items (LoCoMo messages, answers and message sentences): p50/p95 of
  `projections.retrieval.vectors.nearest` for LoCoMo questions, each a new text (so its
  embedding is computed), with the items' vectors in memory (a long-lived process) and read
  from the cache file (a new process, model already loaded); the cosine alone, in numpy and
  with DuckDB's array_cosine_similarity over the same vectors.

Run: .venv/bin/python -m bench.embeddings [--data ../shared/data/locomo/locomo10.json]
     [--items 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import percentiles, report
from bench.locomo import DATA
from mindledger.domain.settings import DEFAULT_EMBEDDING_MODEL


def texts(data: Path, items: int) -> tuple[list[str], list[str]]:
    """`items` distinct item texts and the questions (never among the items)."""
    samples = json.loads(data.read_text())
    messages, answers, questions = [], [], []
    for s in samples:
        for key, value in s["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                messages += [t["text"] for t in value if t.get("text")]
        questions += [q["question"] for q in s["qa"]]
        answers += [str(q["answer"]) for q in s["qa"] if q.get("answer")]
    sentences = [p.strip() for m in messages for p in m.split(". ") if p.strip() != m]
    pool = list(dict.fromkeys(messages + answers + sentences))
    asked = set(questions)
    return [t for t in pool if t not in asked][:items], list(dict.fromkeys(questions))


def rate(n: int, seconds: float) -> float:
    return round(n / seconds, 1)


def run(data: Path, items: int, queries: int, singles: int = 50) -> None:
    from mindledger.adapters.embeddings import LiteLLMEmbedder
    from mindledger.adapters.key_store import MemoryKeyStore
    from mindledger.adapters.minilm import shared_model
    from mindledger.domain.text_keys import TextKeys
    from mindledger.projections.retrieval.vectors import closest, nearest

    keys = TextKeys(MemoryKeyStore())  # one mind's cache keys, in memory

    pool, questions = texts(data, items)
    start = time.perf_counter()
    model = shared_model()
    load = time.perf_counter() - start
    start = time.perf_counter()
    model.encode(pool[:1000])
    batch_raw = rate(len(pool[:1000]), time.perf_counter() - start)
    start = time.perf_counter()
    for q in questions[:singles]:
        model.encode([q])
    single_raw = rate(singles, time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "embeddings.sqlite"
        warm = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, cache, keys)
        warm(["import litellm and register the provider"])
        start = time.perf_counter()
        vectors = warm.matrix(pool)
        batch_litellm = rate(len(pool), time.perf_counter() - start)
        asked = iter(questions[singles:])
        start = time.perf_counter()
        for _ in range(singles):
            warm([next(asked)])
        single_litellm = rate(singles, time.perf_counter() - start)
        in_memory, from_file = [], []
        for _ in range(queries):
            start = time.perf_counter()
            nearest(warm, next(asked), pool, k=10)
            in_memory.append(time.perf_counter() - start)
        for _ in range(max(queries // 4, 1)):  # a new embedder: its memory is empty
            cold = LiteLLMEmbedder(DEFAULT_EMBEDDING_MODEL, cache, keys)
            start = time.perf_counter()
            nearest(cold, next(asked), pool, k=10)
            from_file.append(time.perf_counter() - start)
            cold.cache.close()
        numpy_only, duck = cosine_only(vectors, closest)
    report(
        "embeddings",
        {
            "model": DEFAULT_EMBEDDING_MODEL,
            "load_seconds": round(load, 2),
            "batch_sentences_per_s": batch_raw,
            "batch_via_litellm_and_cache_sentences_per_s": batch_litellm,
            "single_sentences_per_s": single_raw,
            "single_via_litellm_sentences_per_s": single_litellm,
        },
    )
    report(
        "semantic_lookup",
        {
            "items": len(pool),
            **{"in_memory_" + k: v for k, v in percentiles(in_memory).items()},
            **{"from_cache_file_" + k: v for k, v in percentiles(from_file).items()},
            **{"cosine_numpy_" + k: v for k, v in percentiles(numpy_only).items()},
            **{"cosine_duckdb_" + k: v for k, v in percentiles(duck).items()},
        },
    )


def cosine_only(vectors: Any, closest: Any) -> tuple[list[float], list[float]]:
    """Top 10 by cosine for 50 item vectors used as queries: numpy, then DuckDB."""
    import duckdb

    dims = vectors.shape[1]
    numpy_only, duck = [], []
    for v in vectors[:50]:
        start = time.perf_counter()
        closest(v, vectors, 10)
        numpy_only.append(time.perf_counter() - start)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE items (id INTEGER, v FLOAT[{dims}])")
    con.executemany(
        "INSERT INTO items VALUES (?, ?)", [(i, row.tolist()) for i, row in enumerate(vectors)]
    )
    for v in vectors[:50]:
        start = time.perf_counter()
        con.execute(
            f"SELECT id FROM items ORDER BY array_cosine_similarity(v, ?::FLOAT[{dims}]) DESC "
            "LIMIT 10",
            [np.asarray(v).tolist()],
        ).fetchall()
        duck.append(time.perf_counter() - start)
    return numpy_only, duck


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--singles", type=int, default=50, help="questions embedded one by one")
    args = parser.parse_args()
    run(args.data, args.items, args.queries, args.singles)


if __name__ == "__main__":
    main()
