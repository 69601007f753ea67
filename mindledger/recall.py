"""Recall: what the mind would remember for a text, at a budget, and why (no model call)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from mindledger.compose import (
    Home,
    clock_from_env,
    read_model,
)
from mindledger.identity_view import identity_view
from mindledger.rules import AsOf


def recall_data(home: Home, query: str, budget: int, as_of: AsOf | None = None) -> dict[str, Any]:
    """What `mind recall --json` prints (the HTTP API's recall too)."""
    return recall_from(
        home, identity_view(home).config, lambda: read_model(home), query, budget, as_of
    )


def recall_from(
    home: Home,
    config: dict[str, str],
    opener: Callable[[], AbstractContextManager[Any]],
    query: str,
    budget: int,
    as_of: AsOf | None = None,
) -> dict[str, Any]:
    """`recall_data` given the mind's settings (`config`) and how to open its read model
    caught up (`opener`): `mindledger.quick_reads` opens it without the typed settings."""
    from mindledger.compose import embedder
    from mindledger.domain.settings import DEFAULT_RECALL_SPANS, RECALL_SPANS
    from mindledger.projections.queries.listings import ledger_point
    from mindledger.projections.retrieval.recall import recall as run_recall
    from mindledger.projections.retrieval.vector_items import tracked_position
    from mindledger.vector_projection import vectors_status

    embed = embedder(home, config)
    spans = config.get(RECALL_SPANS, DEFAULT_RECALL_SPANS) == "on"
    try:
        with opener() as con:
            position, now = None, clock_from_env()()
            if as_of is not None:
                position, at = ledger_point(con, as_of.position, as_of.time)
                now = at or now
            context = run_recall(con, query, budget, now, as_of=position, embed=embed, spans=spans)
            head = tracked_position(con)
    finally:
        if embed is not None:
            embed.close()  # its cache file, now (a forget may replace it)
    items = [
        {
            "id": i.id,
            "source_id": i.source_id,
            "kind": i.kind,
            "channel": i.channel,
            "score": i.score,
            "reason": i.reason,
            "tokens": i.tokens,
            "day": i.day,
            "text": i.text,
            "clipped": i.clipped,
            "excerpt": list(i.excerpt) if i.excerpt else None,
        }
        for i in context.items
    ]
    # Whether the vector channel saw every item: `lag` events not embedded yet (the vector
    # projection runs beside turns, never in them).
    vectors = vectors_status(home, head, config)
    return {
        "items": items,
        "tokens": context.tokens,
        "dropped": context.dropped_total,
        "vectors": vectors,
    }
