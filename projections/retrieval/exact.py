"""Lexical exactness: a query whose words appear verbatim in a stored item puts that item first.

BM25 and reciprocal rank fusion score words, not phrases, and the fixed items (identity, open
commitments, live threads) always led the list, so a query copied from one stored item could
rank it thirteenth (the web page's recall). Words here are the lower-cased runs of letters and
digits, stop words kept, so "call Bob" is not "Bob called" and "promise 1" is not "promise 10".

An item whose whole text is the query's words leads; then items holding them as a run, when the
query has at least two words and few items hold them (a two-word phrase in many messages is
no one item's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

_WORD = re.compile(r"[a-z0-9]+")
WHOLE, INSIDE = 2, 1
# More items holding the query's words than this, and holding them is no longer a sign of which
# one the query copied: only whole matches lead then.
FEW_INSIDE = 3
# A query longer than this (a turn's whole message) is not looked for verbatim: it would cost a
# scan of every candidate's words for a match that a message so long rarely has.
MAX_WORDS = 200


class Shown(Protocol):
    """A candidate as exactness sees it: its position and display text."""

    id: int
    text: str


# A stored text is shown on one line (`domain.prompt_text.one_line`): a line break reads `\n`, a
# hidden character `\x1b` or `\u200b`, a tag-shaped `<` reads `&lt;`. Read as a space and a `<`
# again, or a message of two lines never led for its own text ("note\nsecond" is not "note second").
_SHOWN = re.compile(r"\\(?:[nrt]|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})|&lt;")


def plain(text: str) -> str:
    """A text with the escapes of its one-line form read back (the query's too, so a query
    that holds them literally reads the same)."""
    if "\\" not in text and "&" not in text:  # most texts: no regex
        return text
    return _SHOWN.sub(lambda m: "<" if m.group() == "&lt;" else " ", text)


def words(text: str) -> list[str]:
    """Lower-cased words of a text (letters and digits), stop words kept."""
    return _WORD.findall(text.lower())


def body(shown: str) -> str:
    """A display text without its leading `[label] ` (`projections.retrieval.item_text`): a
    label's fields cannot hold a bracket, so the first `] ` closes it."""
    if shown.startswith("["):
        end = shown.find("] ")
        if end >= 0:
            return shown[end + 2 :]
    return shown


def phrase(query: list[str]) -> re.Pattern[str]:
    """The query's words as a run in a lower-cased text, anything but a letter or digit
    between them (it starts with the first word itself, so the scan looks for that literal;
    `holds` checks the character before)."""
    inner = r"[^a-z0-9]+".join(re.escape(w) for w in query)
    return re.compile(rf"{inner}(?![a-z0-9])")


def holds(run: re.Pattern[str], low: str) -> bool:
    """Whether `run` matches in `low` at the start of a word."""
    return any(
        m.start() == 0 or not low[m.start() - 1].isalnum() or not low[m.start() - 1].isascii()
        for m in run.finditer(low)
    )


def tier(query: list[str], shown: str, run: re.Pattern[str] | None = None) -> int:
    """WHOLE when the item's text is exactly the query's words, INSIDE when it holds them as a
    run, else 0 (`run`: `phrase(query)`, compiled once by a caller with many items)."""
    text = plain(body(shown))
    low = text.lower()
    if not query or max(query, key=len) not in low:  # a cheap test first: most fail it
        return 0
    if not holds(run or phrase(query), low):  # one scan, not a tokenized long text
        return 0
    if len(low) <= 2 * sum(len(w) + 1 for w in query) + 8 and words(text) == query:
        return WHOLE
    return INSIDE if len(query) >= 2 else 0


def exact_lead(query: str, candidates: Iterable[Shown]) -> dict[int, int]:
    """The candidates that lead for `query`: position -> tier (WHOLE before INSIDE)."""
    q = words(plain(query))
    if not q or len(q) > MAX_WORDS:
        return {}
    run = phrase(q)
    tiers = {c.id: t for c in candidates if (t := tier(q, c.text, run))}
    inside = [i for i, t in tiers.items() if t == INSIDE]
    if len(inside) > FEW_INSIDE:
        for i in inside:
            del tiers[i]
    return tiers
