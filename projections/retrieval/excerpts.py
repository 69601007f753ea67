"""Long messages enter the context as their best-matching passage, not whole or not at all.

A reply of ~1,000 tokens took half of a 2,000-token budget for the one sentence that matched,
and the user message holding the evidence fell out (bench/longmsg.py: evidence recall 0.164
against a plain BM25's 0.273 at 2,000 tokens on a held-out set). So every message longer than
LONG_CHARS that could still fit is cut to the passage of about EXCERPT_CHARS where the query's
rarer words are densest: the sentence with the most weight, widened by its neighbouring
sentences while they fit. The item keeps its ledger position and records where the passage
lies in the stored text (`ContextItem.excerpt`: start, end, whole length, in characters), so
the whole message is one query away (`mind query "SELECT text FROM messages WHERE position =
N"`). A message no query word reaches (a neighbour) enters as its opening.

Weights are the query terms' inverse frequency among the ranked items (a word every candidate
holds says nothing about which passage matters), found by prefix match of their stems, so
"connection" finds "connections" (`projections.retrieval.text_index`).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import replace

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.context_port import AssembledContext, ContextItem
from mindledger.domain.prompt_text import one_line
from mindledger.projections.retrieval.context import fit
from mindledger.projections.retrieval.text_index import terms
from mindledger.projections.retrieval.tokens import CHARS_PER_TOKEN

# A message longer than this (~300 tokens) enters as an excerpt of about EXCERPT_CHARS (bench/
# longmsg.py; a unit longer than half of it is cut at spaces, so a window can widen).
LONG_CHARS = 1200
EXCERPT_CHARS = 480
# A larger budget takes longer passages: at most 1/EXCERPT_SHARE of it each.
EXCERPT_SHARE = 16
_UNIT = re.compile(r"[^.!?\n]*(?:[.!?]+|\n+|$)")
CUT = "…"
_QUANTITY = re.compile(
    r"\bhow (?:many|much|big|large|long|fast|often|old|high|low|far)\b|"
    r"\bwhat (?:number|version|size|percentage|amount)\b",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
NUMBER_HINT = 0.01  # a tie-break, below any query term's weight
# Value per token: an excerpt's score is divided by (characters / COST_CHARS) ** VALUE_POWER
# (COST_CHARS ~60 tokens, longer than most turns of a chat; `value_order`).
COST_CHARS = 240
VALUE_POWER = 1.0
# Budget left over after packing widens entered passages while at least this much is left.
MIN_WIDEN = 200


def units(text: str) -> list[tuple[int, int]]:
    """Sentence and line spans of `text` (start, end), none longer than EXCERPT_CHARS // 2."""
    out: list[tuple[int, int]] = []
    half = EXCERPT_CHARS // 2
    for m in _UNIT.finditer(text):
        start, end = m.span()
        while end - start > half:
            cut = text.rfind(" ", start + 1, start + half)
            cut = cut if cut > start else start + half
            out.append((start, cut))
            start = cut
        if end > start:
            out.append((start, end))
    return out


def weights(query: str, items: list[ContextItem]) -> dict[str, float]:
    """Each query term's weight: its inverse frequency among the items' texts."""
    q = sorted(set(terms(query)))
    texts = [i.text.lower() for i in items]
    n = len(texts) or 1
    return {t: math.log(1 + n / (1 + sum(t in x for x in texts))) for t in q}


def asks_number(query: str) -> bool:
    """Whether a query asks for a quantity ("how many", "what version", ...)."""
    return _QUANTITY.search(query) is not None


def passage(
    text: str, weight: dict[str, float], limit: int = EXCERPT_CHARS, number: bool = False
) -> tuple[int, int]:
    """The span of `text` (start, end) of at most `limit` characters where the weighted query
    terms are densest, and among equals (when the query asks for one, `number`) one with a
    digit: the answer type a question names is the one signal words shared with the query
    cannot give; the opening when no term is in it."""
    spans = units(text)
    if not spans:
        return 0, 0
    pattern = "|".join(re.escape(t) for t in sorted(weight, key=len, reverse=True))
    found = re.compile(rf"\b(?:{pattern})", re.IGNORECASE) if pattern else None
    score = [0.0] * len(spans)
    if found is not None:
        # One scan of the text, each match put in its unit (a scan per unit cost ~3x).
        starts = [s for s, _ in spans]
        seen: dict[int, set[str]] = {}
        for m in found.finditer(text):
            seen.setdefault(bisect_right(starts, m.start()) - 1, set()).add(m.group(0).lower())
        for n, held in seen.items():
            score[n] = sum(weight.get(w, 0.0) for w in held)
            if number and score[n] and _DIGIT.search(text, *spans[n]):
                score[n] += NUMBER_HINT
    best = max(range(len(spans)), key=lambda n: (score[n], -n)) if any(score) else 0
    first = last = best
    while True:  # widen by the better neighbouring unit (the following one on a tie)
        options = [n for n in (first - 1, last + 1) if 0 <= n < len(spans)]
        options = [n for n in options if spans[max(n, last)][1] - spans[min(n, first)][0] <= limit]
        if not options:
            break
        pick = max(options, key=lambda n: (score[n], n))
        first, last = min(first, pick), max(last, pick)
    return spans[first][0], spans[last][1]


def value_order(items: list[ContextItem], blank: frozenset[int] = frozenset()) -> list[ContextItem]:
    """Messages reordered among their own places by value per cost: the score of an excerpt (or
    of a long message left whole) is divided by (its characters / COST_CHARS) ** VALUE_POWER,
    every other message's kept. A long
    message's score was earned by all of its words, and its passage carries only some of them;
    a whole message's length says nothing of its worth (a LoCoMo turn with a photo's caption
    is often the evidence: costing every message by length lost 3 points at 2,000 tokens and
    14 at 500, bench/locomo.py). An excerpt holding none of the query's words (`blank`: a long
    neighbour's opening) goes last: on long messages such neighbours took over half the budget
    for no gain (bench/longmsg.py). An exact match keeps its place, as every other kind does."""
    if VALUE_POWER == 0:
        return items
    slots = [
        n for n, i in enumerate(items) if i.kind == "message" and not i.reason.startswith("exact")
    ]

    def value(i: ContextItem) -> float:
        if i.id in blank:
            return 0.0
        if i.excerpt is None and len(i.text) <= LONG_CHARS:
            return i.score
        cost: float = max(1.0, len(i.text) / COST_CHARS) ** VALUE_POWER
        return i.score / cost

    ordered = sorted((items[n] for n in slots), key=lambda i: -value(i))  # stable: ties keep rank
    out = list(items)
    for n, item in zip(slots, ordered, strict=True):
        out[n] = item
    return out


def pack(
    con: duckdb.DuckDBPyConnection, items: list[ContextItem], query: str, budget: int
) -> AssembledContext:
    """`items` packed into `budget` (`projections.retrieval.context.fit`), each long message
    that could fit cut to its best passage (in order, assuming the ones before it enter), then
    by value per token; budget left over widens the passages that entered, best first."""
    room = budget * CHARS_PER_TOKEN
    size = max(EXCERPT_CHARS, room // EXCERPT_SHARE)
    long: list[int] = []
    for n, item in enumerate(items):
        if room <= 0:
            break
        if item.kind == "message" and len(item.text) > LONG_CHARS:
            long.append(n)
            room -= size
        else:
            room -= len(item.text)
    if not long:
        return fit(items, budget)
    stored = dict(
        con.execute(
            "SELECT position, text FROM messages WHERE position IN (SELECT unnest(?))",
            [[items[n].id for n in long]],
        ).fetchall()
    )
    stored = {p: t for p, t in stored.items() if len(t) > LONG_CHARS}
    weight = weights(query, items)
    number = asks_number(query)
    words = re.compile(r"\b(?:" + "|".join(re.escape(t) for t in weight) + ")", re.IGNORECASE)
    out = list(items)
    blank: set[int] = set()

    def cut(n: int, limit: int) -> int:
        """Cut item n to its passage of at most `limit`; the passage's length."""
        item, text = items[n], stored[items[n].id]
        start, end = passage(text, weight, limit, number)
        if not weight or words.search(text, start, end) is None:
            blank.add(item.id)
        label = item.text[: item.text.find("] ") + 2]
        shown = (CUT if start else "") + one_line(text[start:end].strip())
        out[n] = replace(
            item,
            text=label + shown + (CUT if end < len(text) else ""),
            excerpt=(start, end, len(text)),
        )
        return end - start

    sizes = {n: cut(n, size) for n in long if items[n].id in stored}
    context = fit(value_order(out, frozenset(blank)), budget)
    spare = budget * CHARS_PER_TOKEN - len(context.rendered) - MIN_WIDEN // 4
    entered = {i.id for i in context.items if not i.clipped}
    widened = False
    for n in sizes:
        if spare < MIN_WIDEN:
            break
        if items[n].id in entered and sizes[n] < len(stored[items[n].id]):
            spare -= cut(n, sizes[n] + spare) - sizes[n]
            widened = True
    return fit(value_order(out, frozenset(blank)), budget) if widened else context
