"""Embeddings through LiteLLM: recall's vector channel and semantic matching of questions.

`embedding.model` names a LiteLLM embedding model. The default, `local/all-minilm-l6-v2`, runs
offline in this process (adapters/minilm.py), called directly (no LiteLLM import) and also
registered with LiteLLM as the custom embedding provider `local`
(`litellm.custom_provider_map`), so that a hosted model replaces it by configuration alone:
`mind config set embedding.model openai/text-embedding-3-small` (and `embedding.api_base URL`
for a local OpenAI-compatible server). Vectors are cached in
MIND_HOME/embeddings.sqlite by model and keyed text hash (HMAC under the mind's "embeddings"
secret: a plain sha256 of a short sentence would confirm a guess of it), so a text is embedded
once, not at every query. The cache is derived data: deleting it costs only new embedding calls;
`forget` deletes the rows of given texts and rewrites the file without them.

Residual risk: whoever holds the mind's key store (and its master key, if set) holds the secret
and can still test a guessed text against the keys of rows that remain; a forgotten text's row
is gone after `forget`.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mindledger.domain.errors import LedgerReadOnlyError, MindError
from mindledger.domain.private_files import create_private_file
from mindledger.domain.text_keys import EMBEDDINGS, TextKeys

BATCH = 128
LOCAL_PROVIDER = "local"

LOCAL_MODELS = ("all-minilm-l6-v2",)
MEMO = 200_000  # vectors kept in memory per embedder (~300 MB at 384 dimensions)
KEYED_VERSION = 1  # the cache's user_version once its row keys are keyed hashes
_READ_ONLY = (
    "this process cannot write the embeddings cache (the home is read-only); nothing was "
    "written: reading commands still work, recording needs a writable home"
)

Matrix = npt.NDArray[np.float32]


class EmbeddingError(MindError):
    """Raised when the embedding model could not be reached or answered nonsense."""


class LiteLLMEmbedder:
    """A callable: texts -> vectors (one per text, in order); `matrix` gives them as one
    float32 array for numpy's cosine (projections/retrieval/vectors.py)."""

    def __init__(
        self,
        model: str,
        cache: Path,
        keys: TextKeys,
        api_base: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        """`keys`: the mind's keyed hashes, whose "embeddings" secret keys the cache's rows."""
        self.model, self.keys, self.api_base, self.timeout = model, keys, api_base, timeout
        self.cache = open_cache(cache)
        self.lock = threading.Lock()
        self.memo: dict[str, Matrix] = {}  # this process's vectors by text key
        self.calls = 0  # requests made to the model (the cache answers the rest)
        self.embedded = 0  # texts sent to the model

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self.matrix(texts)]

    def matrix(self, texts: list[str]) -> Matrix:
        """One row per text (float32); each distinct text is embedded once, ever."""
        keys = [self.text_key(t) for t in texts]
        with self.lock:
            found = {k: self.memo[k] for k in set(keys) if k in self.memo}
            found.update(self._cached({k for k in keys if k not in found}))
            missing = sorted(
                {k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items()
            )
            for start in range(0, len(missing), BATCH):
                chunk = missing[start : start + BATCH]
                vectors = np.asarray(self._embed([t for _, t in chunk]), dtype=np.float32)
                with self.cache:
                    self.cache.executemany(
                        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                        [
                            (self.model, k, v.tobytes())
                            for (k, _), v in zip(chunk, vectors, strict=True)
                        ],
                    )
                found.update({k: v for (k, _), v in zip(chunk, vectors, strict=True)})
            if len(self.memo) + len(found) > MEMO:
                self.memo.clear()
            self.memo.update(found)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def close(self) -> None:
        """Release the cache file now. A forget replaces that file (`keep_only`); a connection
        left for the collector holds the old, deleted file open until it runs, and a served
        mind that asks often held more of them with every forget."""
        with self.lock:
            self.cache.close()

    def text_key(self, text: str) -> str:
        """A text's row key in the cache: keyed, so the file cannot confirm a guessed text."""
        return self.keys.keyed(EMBEDDINGS, text)

    def forget(self, texts: Iterable[str]) -> int:
        """Delete these texts' vectors (of every model) from the cache and this process's memory,
        then rewrite the file without them; how many rows were deleted."""
        keys = {self.text_key(t) for t in texts}
        with self.lock:
            for key in keys:
                self.memo.pop(key, None)
            return forget_rows(self.cache, keys)

    def _cached(self, keys: set[str]) -> dict[str, Matrix]:
        out: dict[str, Matrix] = {}
        wanted = list(keys)
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self.cache.execute(
                f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                [self.model, *part],
            ):
                out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if self.model.startswith(f"{LOCAL_PROVIDER}/"):
            return self._embed_here(texts)
        self.calls += 1
        self.embedded += len(texts)
        return provider_vectors(self.model, texts, self.api_base, self.timeout)[0]

    def _embed_here(self, texts: list[str]) -> list[list[float]]:
        """The offline model, called in this process as LiteLLM's `local` provider would call
        it, without importing LiteLLM (seconds of CPU for a numpy forward pass)."""
        self.calls += 1
        self.embedded += len(texts)
        try:
            vectors = local_vectors(self.model, texts)
        except MindError:
            raise
        except Exception as e:  # the model's boundary, as for a provider
            raise EmbeddingError(f"embedding model {self.model} failed: {e}") from None
        return [list(map(float, v)) for v in vectors]


def open_cache(path: Path) -> sqlite3.Connection:
    """The vector cache at `path` (created when missing); LedgerReadOnlyError when this
    process cannot write it (a read-only home), before anything is asked of a model."""
    try:
        return _open_cache(path)
    except (OSError, sqlite3.OperationalError) as e:
        if isinstance(e, OSError) and e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        if isinstance(e, sqlite3.OperationalError) and "readonly" not in str(e):
            raise
        raise LedgerReadOnlyError(_READ_ONLY) from e


def _open_cache(path: Path) -> sqlite3.Connection:
    # check_same_thread off: recall may call from a read thread; the embedder's lock
    # serialises use.
    create_private_file(path)  # cached vectors say what was asked; SQLite's journals follow
    # SQLite opens a file this process cannot write read-only, and says so only at the first
    # vector kept (after a model was asked): tried now, by opening it for writing (no change).
    os.close(os.open(path, os.O_WRONLY))
    con = sqlite3.connect(path, check_same_thread=False)
    # Derived data: a write lost in a crash costs one embedding call again, so no fsync per
    # new query vector (a commit with it measured ~26 ms on a busy disk).
    con.execute("PRAGMA synchronous = OFF")
    # A deleted row's bytes are zeroed, not left in a free page (forgetting).
    con.execute("PRAGMA secure_delete = ON")
    con.execute(
        "CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vector BLOB, "
        "PRIMARY KEY (model, key))"
    )
    if con.execute("PRAGMA user_version").fetchone()[0] < KEYED_VERSION:
        # A cache written before keyed row keys holds sha256 hashes of texts, and rows that
        # `forget` could never find: emptied once (re-embedding is all it costs).
        with con:
            con.execute("DELETE FROM vectors")
            con.execute(f"PRAGMA user_version = {KEYED_VERSION}")
        con.execute("VACUUM")
    return con


def forget_rows(con: sqlite3.Connection, keys: Iterable[str]) -> int:
    """Delete the rows of these text keys (every model), then VACUUM: the file is rewritten
    without them (and with no free page that could still hold their bytes); the rollback
    journal that held the old pages is deleted at commit. How many rows were deleted."""
    wanted = sorted(set(keys))
    gone = 0
    with con:
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            gone += con.execute(f"DELETE FROM vectors WHERE key IN ({marks})", part).rowcount
    con.execute("VACUUM")
    return gone


def keep_only(path: Path, keys: TextKeys, texts: Iterable[str]) -> int:
    """The cache at `path` rewritten into a new file holding only the rows of `texts` (what a
    read model still shows in the clear after a forget), which replaces it: no page of the old
    file survives. Dropping the whole cache made the next ask embed every stored question
    again (4.4 s instead of 1.5 at 3,600 events, growing with the mind). How many rows were
    kept (0, and nothing written, when there is no cache)."""
    if not path.exists():
        return 0
    wanted = sorted({keys.keyed(EMBEDDINGS, t) for t in texts})
    tmp = path.with_name(f"{path.name}.{os.getpid()}.keep")
    for leftover in _files_of(tmp):
        leftover.unlink(missing_ok=True)
    new = _open_cache(tmp)
    try:
        new.execute("ATTACH DATABASE ? AS old", (str(path),))
        with new:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                new.execute(
                    "INSERT OR IGNORE INTO vectors SELECT * FROM old.vectors "
                    f"WHERE key IN ({marks})",
                    part,
                )
        new.execute("DETACH DATABASE old")
        ((kept,),) = new.execute("SELECT count(*) FROM vectors").fetchall()
    finally:
        new.close()
    for stale in _files_of(path)[1:]:  # the old file's journals, not the file itself
        stale.unlink(missing_ok=True)
    os.replace(tmp, path)
    return int(kept)


def _files_of(path: Path) -> list[Path]:
    return [path, *(path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))]


def forget_cached(path: Path, keys: TextKeys, texts: Iterable[str]) -> int:
    """`LiteLLMEmbedder.forget` on the cache file at `path` without an embedder (nothing to do
    when there is no cache); how many rows were deleted."""
    if not path.exists():
        return 0
    con = open_cache(path)
    try:
        return forget_rows(con, {keys.keyed(EMBEDDINGS, t) for t in texts})
    finally:
        con.close()


def provider_vectors(
    model: str, texts: list[str], api_base: str | None = None, timeout: float = 30.0
) -> tuple[list[list[float]], int]:
    """`texts` embedded by a LiteLLM embedding model, with no cache: the vectors (one per
    text, in order) and the input tokens the provider counted (0 when it says nothing)."""
    from mindledger.adapters.litellm_model import import_litellm  # seconds to import

    litellm = import_litellm()
    register_local_provider(litellm)
    args: dict[str, Any] = {"model": model, "input": texts, "timeout": timeout}
    if api_base:
        args["api_base"] = api_base
        args["api_key"] = os.environ.get("OPENAI_API_KEY") or "local"
    try:
        response = litellm.embedding(**args)
    except MindError:
        raise
    except Exception as e:  # the provider boundary: any failure becomes one clear error
        raise EmbeddingError(f"embedding model {model} failed: {e}") from None
    data = sorted(response.data, key=lambda d: d["index"])
    if len(data) != len(texts):
        raise EmbeddingError(
            f"embedding model {model} returned {len(data)} vectors for {len(texts)} texts"
        )
    usage = getattr(response, "usage", None)
    tokens = getattr(usage, "prompt_tokens", None) or 0
    return [list(map(float, d["embedding"])) for d in data], int(tokens)


def local_token_counts(texts: list[str]) -> list[int | None]:
    """The tokens the offline model reads of each text (None for a text longer than it reads:
    the model would cut it)."""
    from mindledger.adapters.minilm import shared_model

    return shared_model().token_counts(texts)


def embed_matrix(
    model: str, texts: list[str], api_base: str | None = None, timeout: float = 30.0
) -> Matrix:
    """`texts` embedded by `model`, one float32 row per text, in order, with no cache: the
    offline model called here (no LiteLLM import), any other through LiteLLM. The one call
    site for whatever embeds stored items (the vector projection, a spans index)."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    if model.startswith(f"{LOCAL_PROVIDER}/"):
        from mindledger.adapters.minilm import shared_model

        check_local(model)
        try:
            return np.asarray(shared_model().encode(texts), dtype=np.float32)
        except MindError:
            raise
        except Exception as e:  # the model's boundary, as for a provider
            raise EmbeddingError(f"embedding model {model} failed: {e}") from None
    vectors, _ = provider_vectors(model, texts, api_base, timeout)
    return np.asarray(vectors, dtype=np.float32)


def check_local(model: str) -> None:
    """EmbeddingError unless `model` names an offline model (`local/NAME` or NAME)."""
    if model.removeprefix(LOCAL_PROVIDER + "/") not in LOCAL_MODELS:
        raise EmbeddingError(
            f"unknown local embedding model {model!r}; local models: "
            + ", ".join(f"{LOCAL_PROVIDER}/{m}" for m in LOCAL_MODELS)
        )


def local_vectors(model: str, texts: list[str]) -> list[list[float]]:
    """The offline model's vectors of `texts`; `model`: `local/NAME` (or NAME)."""
    from mindledger.adapters.minilm import shared_model

    check_local(model)
    return [v.tolist() for v in shared_model().encode(texts)]


def register_local_provider(litellm: Any) -> None:
    """Make `local/all-minilm-l6-v2` a LiteLLM embedding model (once per process). Only the
    `local` provider is claimed: completions on the embedded chat model go to
    `openai/smollm2` on loopback and never reach it."""
    if any(item.get("provider") == LOCAL_PROVIDER for item in litellm.custom_provider_map):
        return
    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": LOCAL_PROVIDER, "custom_handler": _local_handler(litellm)},
    ]


def _local_handler(litellm: Any) -> Any:
    """A `litellm.CustomLLM` answering embedding calls with the offline MiniLM."""

    class LocalEmbeddings(litellm.CustomLLM):  # type: ignore[misc]
        def embedding(
            self,
            model: str,
            input: list[str],
            model_response: Any,
            print_verbose: Any,
            logging_obj: Any,
            optional_params: dict[str, Any],
            api_key: str | None = None,
            api_base: str | None = None,
            timeout: Any = None,
            litellm_params: Any = None,
        ) -> Any:
            texts = [input] if isinstance(input, str) else list(input)
            vectors = local_vectors(model, texts)
            model_response.model = f"{LOCAL_PROVIDER}/{model.removeprefix(LOCAL_PROVIDER + '/')}"
            model_response.object = "list"
            model_response.data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            return model_response

        async def aembedding(self, *args: Any, **kwargs: Any) -> Any:
            return self.embedding(*args, **kwargs)

    return LocalEmbeddings()
