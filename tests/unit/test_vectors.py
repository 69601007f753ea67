"""Nearest neighbours by cosine (projections/retrieval/vectors.py), on hand-made vectors."""

from __future__ import annotations

import numpy as np

from mindledger.projections.retrieval.vectors import Neighbour, closest, in_context, nearest


def test_closest_ranks_by_cosine_not_by_length_and_keeps_the_earlier_of_a_tie() -> None:
    candidates = np.array([[0, 5], [10, 0], [3, 3], [1, 0], [0, 0]], dtype=np.float32)

    found = closest(np.array([2, 0], dtype=np.float32), candidates, k=3)

    assert [n.item for n in found] == [1, 3, 2]
    assert found[0].score == found[1].score == 1.0
    assert abs(found[2].score - 0.7071) < 1e-4


def test_closest_honours_the_floor_and_a_k_beyond_the_rows() -> None:
    candidates = np.array([[1, 0], [0, 1], [-1, 0]], dtype=np.float32)

    found = closest(np.array([1, 0], dtype=np.float32), candidates, k=10, floor=0.0)

    assert found == [Neighbour(0, 1.0), Neighbour(1, 0.0)]
    assert closest(np.array([1, 0], dtype=np.float32), candidates, k=0) == []


def test_nearest_embeds_the_query_with_the_texts_through_a_plain_callable() -> None:
    seen: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        seen.append(texts)
        return [[float(len(t)), 1.0] for t in texts]

    found = nearest(embed, "abcd", ["a", "abcd", "abc"], k=1)

    assert seen == [["abcd", "a", "abcd", "abc"]]
    assert found == [Neighbour(1, 1.0)]


def test_in_context_adds_each_neighbours_unit_vector_at_the_weight() -> None:
    rows = np.array([[3, 0, 0], [0, 2, 0], [0, 0, 5]], dtype=np.float32)

    read = in_context(rows, 0.5)

    assert read.tolist() == [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]
    assert rows.tolist() == [[3, 0, 0], [0, 2, 0], [0, 0, 5]]


def test_in_context_at_weight_0_or_with_one_row_is_the_rows_themselves() -> None:
    rows = np.array([[3, 0], [0, 0]], dtype=np.float32)

    assert in_context(rows, 0.0) is rows
    assert in_context(rows[:1], 0.5).tolist() == [[3, 0]]
    assert in_context(rows, 0.5).tolist() == [[1, 0], [0.5, 0]]
