"""Packing items into a budget: exact on the rendered block, messages grouped by day."""

from __future__ import annotations

import pytest

from mindledger.domain.context_port import ContextItem
from mindledger.projections.retrieval.context import (
    DROPPED_KEPT,
    MEMORY_END,
    MEMORY_PREAMBLE,
    day_heading,
    fit,
)
from mindledger.projections.retrieval.tokens import count_tokens


def message(id_: int, day: str, text: str = "a message") -> ContextItem:
    return ContextItem(id_, "message", "lexical", "test", 1.0, 0, f"#{id_} [Ann] {text}", day=day)


def concept(id_: int) -> ContextItem:
    return ContextItem(id_, "concept", "concepts", "test", 1.0, 0, f"#{id_} [concept x] a thing")


def test_messages_render_under_their_day_oldest_first_after_undated_items() -> None:
    items = [
        message(9, "2023-05-08"),
        message(3, "2023-01-02"),
        concept(7),
        message(5, "2023-05-08"),
    ]

    context = fit(items, 2000)

    assert [i.id for i in context.items] == [9, 3, 7, 5]  # the record keeps the ranked order
    assert context.rendered == (
        MEMORY_PREAMBLE
        + "#7 [concept x] a thing\n"
        + day_heading("2023-01-02")
        + "#3 [Ann] a message\n"
        + day_heading("2023-05-08")
        + "#5 [Ann] a message\n#9 [Ann] a message\n"
        + MEMORY_END
    )
    assert context.tokens == count_tokens(context.rendered)


@pytest.mark.parametrize("budget", range(40, 140, 3))
def test_the_budget_bounds_the_rendered_block_headings_included(budget: int) -> None:
    items = [message(i, f"2023-0{1 + i % 5}-01", "word " * (i % 7 + 2)) for i in range(1, 40)]

    context = fit(items, budget)

    assert count_tokens(context.rendered) <= budget
    assert context.tokens == count_tokens(context.rendered)
    assert len(context.items) + context.dropped_total == len(items)
    assert len(context.dropped) == min(DROPPED_KEPT, context.dropped_total)
    assert sum(i.clipped for i in context.items) <= 1
    for item in context.items:
        assert item.text in context.rendered
        assert context.rendered.count(day_heading(item.day or "")) == 1


def test_an_item_that_fits_only_without_its_heading_is_not_taken() -> None:
    first = message(1, "2023-01-01", "x" * 40)
    second = message(2, "2023-01-02", "y" * 40)
    used = len(MEMORY_PREAMBLE) + len(MEMORY_END) + len(day_heading("2023-01-01"))
    used += len(first.text) + 1
    # Room for the second line but not for its day's heading too.
    budget = (used + len(second.text) + 1 + 3) // 4

    context = fit([first, second], budget)

    assert [i.id for i in context.items] == [1]
    assert context.dropped[0]["id"] == 2
    assert count_tokens(context.rendered) <= budget


def test_the_nearest_misses_are_recorded_and_every_miss_is_counted() -> None:
    items = [message(i, "2023-01-01", "word " * 30) for i in range(1, 60)]

    context = fit(items, 200)

    chosen = {i.id for i in context.items}
    missed = [i.id for i in items if i.id not in chosen]
    assert context.dropped_total == len(missed) > DROPPED_KEPT
    assert [d["id"] for d in context.dropped] == missed[:DROPPED_KEPT]
