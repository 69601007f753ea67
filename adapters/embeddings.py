"""Embeddings through LiteLLM, for retrieval's vector channel (off unless configured).

`mind config set embedding.model PROVIDER/MODEL` (and `embedding.api_base URL` for a local
OpenAI-compatible server) turns it on. Vectors are cached in MIND_HOME/embeddings.sqlite by
model and text hash, so a message is embedded once, not at every query. The cache is derived
data: deleting it costs only new embedding calls.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from array import array
from pathlib import Path
from typing import Any

from domain.errors import MindError

BATCH = 128


class EmbeddingError(MindError):
    """The embedding model could not be reached or answered nonsense."""


class LiteLLMEmbedder:
    """A callable: texts -> vectors (one per text, in order)."""

    def __init__(
        self, model: str, cache: Path, api_base: str | None = None, timeout: float = 30.0
    ) -> None:
        self.model, self.api_base, self.timeout = model, api_base, timeout
        self.cache = sqlite3.connect(cache)
        self.cache.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vector BLOB, "
            "PRIMARY KEY (model, key))"
        )
        self.calls = 0  # requests made to the model (the cache answers the rest)

    def __call__(self, texts: list[str]) -> list[list[float]]:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        found = self._cached(set(keys))
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items())
        for start in range(0, len(missing), BATCH):
            chunk = missing[start : start + BATCH]
            vectors = self._embed([t for _, t in chunk])
            with self.cache:
                self.cache.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                    [
                        (self.model, k, array("f", v).tobytes())
                        for (k, _), v in zip(chunk, vectors, strict=True)
                    ],
                )
            found.update({k: v for (k, _), v in zip(chunk, vectors, strict=True)})
        return [found[k] for k in keys]

    def _cached(self, keys: set[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        wanted = list(keys)
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self.cache.execute(
                f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                [self.model, *part],
            ):
                out[key] = array("f", blob).tolist()
        return out

    def _embed(self, texts: list[str]) -> list[list[float]]:
        from adapters.litellm_model import import_litellm  # litellm costs seconds to import

        litellm = import_litellm()
        args: dict[str, Any] = {"model": self.model, "input": texts, "timeout": self.timeout}
        if self.api_base:
            args["api_base"] = self.api_base
            args["api_key"] = os.environ.get("OPENAI_API_KEY") or "local"
        self.calls += 1
        try:
            response = litellm.embedding(**args)
        except Exception as e:  # the provider boundary: any failure becomes one clear error
            raise EmbeddingError(f"embedding model {self.model} failed: {e}") from None
        data = sorted(response.data, key=lambda d: d["index"])
        if len(data) != len(texts):
            raise EmbeddingError(
                f"embedding model {self.model} returned {len(data)} vectors for {len(texts)} texts"
            )
        return [list(map(float, d["embedding"])) for d in data]
