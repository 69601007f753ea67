"""`StoredVectors.stored` keeps the rows it read in the process (adapters/vector_store.py):
what it returns is always what the file holds now, across the projection's passes, a forget
(the file replaced) and a rebuild."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mindledger.adapters import vector_store
from mindledger.adapters.vector_store import FILE, StoredVectors, VectorStore, keep_only

MODEL = "local/test"


def rows(n: int, start: int, scale: float = 1.0) -> np.ndarray:
    return np.arange(start * 4, (start + n) * 4, dtype=np.float32).reshape(n, 4) * scale


def add(path: Path, positions: list[int], scale: float = 1.0) -> None:
    store = VectorStore(path)
    try:
        vectors = np.stack([rows(1, p, scale)[0] for p in positions])
        store.add(MODEL, [(p, "message") for p in positions], vectors, max(positions))
    finally:
        store.close()


def read(path: Path, positions: list[int]) -> tuple[list[int], list[list[float]]]:
    vectors = StoredVectors(path, MODEL, None)
    try:
        kept, matrix = vectors.stored("message", positions)
        return kept, matrix.tolist()
    finally:
        vectors.close_store()


def direct(path: Path, positions: list[int], scale: float = 1.0) -> list[list[float]]:
    return [rows(1, p, scale)[0].tolist() for p in positions]


def test_kept_rows_follow_the_file_through_passes_forgets_and_rebuilds(tmp_path: Path) -> None:
    path = tmp_path / FILE
    VectorStore(path).close()
    add(path, [1, 2, 4])  # 3 is never embedded (nothing to embed there)
    asked = [5, 4, 3, 2, 1]
    assert read(path, asked) == ([4, 2, 1], direct(path, [4, 2, 1]))
    add(path, [5, 6])  # a pass: 5 is embedded now, 3 stays absent
    assert read(path, [6, *asked]) == ([6, 5, 4, 2, 1], direct(path, [6, 5, 4, 2, 1]))
    keep_only(path, [1, 5, 6])  # a forget: 2 and 4 gone, the file replaced
    assert read(path, asked) == ([5, 1], direct(path, [5, 1]))
    store = VectorStore(path)  # a rebuild in place, from 0
    try:
        store.reset(MODEL)
    finally:
        store.close()
    assert read(path, asked) == ([], [])
    add(path, [2], scale=2.0)
    assert read(path, asked) == ([2], direct(path, [2], scale=2.0))


def test_only_rows_never_written_again_are_kept(tmp_path: Path) -> None:
    """A window (kind `window`) may be cut again at the same position: read from the file."""
    path = tmp_path / FILE
    VectorStore(path).close()
    store = VectorStore(path)
    try:
        store.add(MODEL, [(1, "window")], rows(1, 1), 1)
        vectors = StoredVectors(path, MODEL, None)
        assert vectors.stored("window", [1])[1].tolist() == rows(1, 1).tolist()
        store.add(MODEL, [(1, "window")], rows(1, 1, scale=3.0), 1)
        assert vectors.stored("window", [1])[1].tolist() == rows(1, 1, scale=3.0).tolist()
        vectors.close_store()
    finally:
        store.close()


def test_past_the_rows_kept_the_first_read_go_and_reads_stay_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_store, "ROWS_KEPT", 3)
    path = tmp_path / FILE
    VectorStore(path).close()
    add(path, [1, 2, 3, 4, 5, 6])
    for asked in ([1, 2, 3, 4], [5, 6], [6, 4, 2, 1], [3]):
        assert read(path, asked) == (asked, direct(path, asked))
    assert len(vector_store._rows_kept[(str(path), "message")].rows) <= 3
