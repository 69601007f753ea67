"""Nearest neighbours by cosine similarity, over whatever texts a caller holds.

An embedding function is the port's `Embed` (texts -> vectors); an embedder that also has a
`matrix(texts)` method (adapters/embeddings.py) hands its vectors over as one float32 array,
which saves turning every vector into a Python list and back. Cosine is one matrix product in
numpy: 10,000 vectors of 384 take about a millisecond (bench/embeddings.py), so no index is kept.
numpy is imported on first use: recall imports this module, and most minds never embed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
Embed = Callable[[list[str]], list[list[float]]]


class Neighbour(NamedTuple):
    """A text's place in the list given, and its cosine similarity to the query."""

    item: int
    score: float


def vectors_of(embed: Embed, texts: list[str]) -> Matrix:
    """The texts' vectors as rows of one float32 array (through `embed.matrix` when it has one)."""
    import numpy as np

    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    matrix = getattr(embed, "matrix", None)
    rows = matrix(texts) if callable(matrix) else embed(texts)
    return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)


def closest(query: Matrix, candidates: Matrix, k: int, floor: float = -1.0) -> list[Neighbour]:
    """The `k` rows of `candidates` most similar to the vector `query`, best first (ties: the
    earlier row), those at or above `floor` only."""
    import numpy as np

    if candidates.shape[0] == 0 or k <= 0:
        return []
    # Dot products, then divided by the norms: normalising a copy of the candidates first
    # cost two 15 MB copies at 10,000 vectors (bench/embeddings.py).
    q = query.reshape(-1).astype(np.float32, copy=False)
    norms = np.sqrt(np.einsum("ij,ij->i", candidates, candidates)) * (np.linalg.norm(q) or 1.0)
    # einsum, not `@`: a matrix-vector product went to OpenBLAS's threads, whose spinning on a
    # busy machine took ~50 ms for 2,000 vectors (one core's loop takes under one).
    scores = np.einsum("ij,j->i", candidates, q) / np.where(norms == 0, 1.0, norms)
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    ranked = sorted(top.tolist(), key=lambda i: (-float(scores[i]), i))
    return [Neighbour(i, float(scores[i])) for i in ranked if scores[i] >= floor]


def in_context(rows: Matrix, weight: float) -> Matrix:
    """Vectors of items in sequence (`rows`: consecutive messages, either way round), each read
    in its context: its unit vector plus `weight` times each neighbour's (the rows just before
    and after). A terse reply ("Yes, last Tuesday!") takes on the words of the question it
    answers, and a turn on a topic the words of the turns around it. `weight` 0: `rows`."""
    import numpy as np

    if weight == 0 or rows.shape[0] < 2:
        return rows
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    unit = rows / np.where(norms == 0, 1.0, norms)[:, None]
    out = unit.copy()
    out[1:] += weight * unit[:-1]
    out[:-1] += weight * unit[1:]
    return out.astype(np.float32, copy=False)


def nearest(
    embed: Embed, query: str, texts: Sequence[str], k: int = 10, floor: float = -1.0
) -> list[Neighbour]:
    """The `k` texts closest in meaning to `query` (cosine of their embeddings, each text
    embedded once and cached by the embedder), best first, those scoring at least `floor`."""
    if not texts:
        return []
    vectors = vectors_of(embed, [query, *texts])
    return closest(vectors[0], vectors[1:], k, floor)


def nearest_items(
    embed: Embed,
    query: str,
    positions: Sequence[int],
    texts: Sequence[str],
    k: int = 10,
    floor: float = -1.0,
    kind: str = "message",
) -> list[Neighbour]:
    """`nearest` for stored items of `kind` (at ledger `positions`, with these `texts`): when
    `embed` has the vector projection's vectors (`stored(kind, positions)`:
    adapters/vector_store.py), only the query is embedded and an item not embedded yet is left
    out; a plain embedding function (a benchmark's, a test's) embeds the texts here."""
    stored = getattr(embed, "stored", None)
    if stored is None:
        return nearest(embed, query, texts, k, floor)
    kept, matrix = stored(kind, list(positions))
    if not kept:
        return []
    where = {p: i for i, p in enumerate(positions)}
    best = closest(vectors_of(embed, [query])[0], matrix, k, floor)
    return [Neighbour(where[kept[n.item]], n.score) for n in best]
