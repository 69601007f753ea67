"""The offline MiniLM (adapters/minilm.py) with its vectors kept in a file between runs, for
benchmarks that embed the same texts again and again (bench/locomo.py --vector-cache): a text's
vector is computed once, ever, and read back by the text's sha256.

Benchmark data only (public texts): a mind's own cache keys its rows by a keyed hash
(adapters/embeddings.py)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mindledger.adapters.minilm import DIMENSIONS, shared_model

Matrix = npt.NDArray[np.float32]


class CachedMiniLM:
    """A callable: texts -> vectors; `matrix` gives them as one float32 array."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, check_same_thread=False, timeout=60)
        self.db.execute("CREATE TABLE IF NOT EXISTS v (k BLOB PRIMARY KEY, v BLOB)")
        self.memo: dict[bytes, Matrix] = {
            k: np.frombuffer(v, dtype=np.float32) for k, v in self.db.execute("SELECT k, v FROM v")
        }
        self.lock = threading.Lock()
        self.embedded = 0

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self.matrix(texts)]

    def matrix(self, texts: list[str]) -> Matrix:
        keys = [hashlib.sha256(t.encode()).digest() for t in texts]
        with self.lock:
            missing = sorted(
                {k: t for k, t in zip(keys, texts, strict=True) if k not in self.memo}.items()
            )
            if missing:  # another process may have embedded them meanwhile
                found = self.db.execute(
                    f"SELECT k, v FROM v WHERE k IN ({','.join('?' * len(missing))})",
                    [k for k, _ in missing],
                ).fetchall()
                self.memo.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in found)
                missing = [(k, t) for k, t in missing if k not in self.memo]
            if missing:
                vectors = shared_model().encode([t for _, t in missing])
                self.embedded += len(missing)
                for (k, _), row in zip(missing, vectors, strict=True):
                    self.memo[k] = row
                self.db.executemany(
                    "INSERT OR REPLACE INTO v VALUES (?, ?)",
                    [(k, row.tobytes()) for (k, _), row in zip(missing, vectors, strict=True)],
                )
                self.db.commit()
            if not keys:
                return np.zeros((0, DIMENSIONS), dtype=np.float32)
            return np.stack([self.memo[k] for k in keys])

    def close(self) -> None:
        self.db.close()
