"""Knowledge in recall: the item whose intent is the query's, and (with an embedder) the items
whose questions are near it; the lexical channel finds items by their words too. Only items that
may reach a context are read: never a disputed, retracted or deleted one. Each shows its state,
confidence and freshness; an unverified one says it is not confirmed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.choices import PPM
from mindledger.domain.knowledge_port import KnownQuestion, Similar
from mindledger.domain.prompt_text import in_label, one_line
from mindledger.domain.text import normalise_intent
from mindledger.projections.engine.kept_reads import KeptReads, may_match
from mindledger.projections.retrieval.item_text import Found
from mindledger.projections.retrieval.vectors import nearest, nearest_items

# A question this near an item's question brings the item into context (it answers directly
# only at domain.knowledge_ask.SEMANTIC_MIN, after its assessment).
CONTEXT_MIN = 0.5
NEAREST = 5
REACHABLE = "NOT deleted AND state NOT IN ('disputed', 'retracted') AND doc_position IS NOT NULL"
COLUMNS = "doc_position, item_id, state, confidence_ppm, freshness, question, answer"
# The intents of the items that may reach a context (`may_match`).
INTENTS = f"SELECT DISTINCT intent FROM knowledge WHERE {REACHABLE}"
TEXT_QUERY = (
    f"SELECT {COLUMNS} FROM knowledge WHERE doc_position IN (SELECT unnest(?)) AND {REACHABLE}"
)


def knowledge_text(
    item_id: str, state: str, confidence_ppm: int, freshness: str, question: str, answer: str
) -> str:
    """An item as it reads in context."""
    label = "unverified, not confirmed" if state == "unverified" else state
    confidence = f"{confidence_ppm / PPM:.2f}"
    head = f"knowledge {in_label(item_id)} {in_label(label)} {confidence} {in_label(freshness)}"
    return f"[{head}] Q: {one_line(question)} A: {one_line(answer)}"


def knowledge_texts(found: list[tuple[Any, ...]]) -> dict[int, tuple[str, str | None, None]]:
    """Display texts of knowledge rows read with `TEXT_QUERY`, by document position."""
    return {r[0]: (knowledge_text(*r[1:]), r[1], None) for r in found}


def knowledge_channel(
    con: duckdb.DuckDBPyConnection,
    query: str,
    limit: int,
    embed: Callable[[list[str]], list[list[float]]] | None,
    kept: KeptReads | None = None,
) -> list[Found]:
    """The item with the query's intent first, then the nearest questions (with `embed`).
    `kept`: the session's kept reads, which know every reachable item's intent."""
    where = f"{REACHABLE} AND doc_position <= ?"
    intent = normalise_intent(query)
    exact = []
    if may_match(con, kept, INTENTS, ("knowledge",), (intent,)):
        exact = con.execute(
            f"SELECT {COLUMNS} FROM knowledge WHERE intent = ? AND {where}", [intent, limit]
        ).fetchall()
    found: list[Found] = [
        (r[0], "knowledge", knowledge_text(*r[1:]), r[1], "asks the same question") for r in exact
    ]
    if embed is None or not query.strip():
        return found
    others = con.execute(
        f"SELECT {COLUMNS} FROM knowledge WHERE {where} ORDER BY doc_position DESC LIMIT 2000",
        [limit],
    ).fetchall()
    others = [r for r in others if not exact or r[0] != exact[0][0]]
    if not others:
        return found
    positions, questions = [r[0] for r in others], [r[5] for r in others]
    best = nearest_items(embed, query, positions, questions, NEAREST, CONTEXT_MIN, "knowledge")
    found += [
        (r[0], "knowledge", knowledge_text(*r[1:]), r[1], f"question similarity {n.score:.2f}")
        for n in best
        for r in [others[n.item]]
    ]
    return found


def stored_questions(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The questions `similar_questions` compares with (a forget keeps their cached vectors)."""
    rows = con.execute("SELECT question FROM knowledge WHERE NOT deleted").fetchall()
    return [str(q) for (q,) in rows if q is not None]


def similar_questions(
    con: duckdb.DuckDBPyConnection,
    embed: Callable[[list[str]], list[list[float]]],
    question: str,
    k: int,
) -> list[Similar]:
    """The `k` items not deleted whose questions are nearest `question` (disputed ones
    included: their assessment says reject, and that is recorded), best first."""
    found = con.execute(
        "SELECT item_id, intent_hash, question FROM knowledge WHERE NOT deleted ORDER BY item_id"
    ).fetchall()
    known = [KnownQuestion(i, h, q) for i, h, q in found]
    best = nearest(embed, question.strip(), [q.question for q in known], k)
    return [Similar(known[n.item], round(n.score, 6)) for n in best]
