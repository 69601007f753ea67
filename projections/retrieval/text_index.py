"""Terms for lexical retrieval: one tokenizer and stemmer for documents and queries alike."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset(
    "a an the and or but if then than so of to in on at by for with from into onto over under "
    "about as is am are was were be been being do does did doing have has had having i me my "
    "mine we us our ours you your yours he him his she her hers it its they them their theirs "
    "this that these those there here what which who whom whose when where why how all any "
    "both each few more most other some such no nor not only own same too very can will just "
    "should would could may might must shall s t d ll m re ve y also up down out off again "
    "further once let lets get got yes ok oh hey hi".split()
)


def stem(word: str) -> str:
    """A light suffix stripper (plural, -ing, -ed): enough to match 'painting' with 'paints'.

    Dispatches on the last letter first: it runs for every word the projector indexes, and most
    words end in none of s, g, d."""
    last = word[-1]
    if last == "s":
        if len(word) > 4 and word.endswith("ies"):
            return word[:-3] + "y"
        if len(word) > 3 and not word.endswith("ss"):
            return word[:-1]
    elif last == "g":
        if len(word) > 5 and word.endswith("ing"):
            return word[:-3]
    elif last == "d" and len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    return word


def terms(text: str) -> list[str]:
    """Stemmed content terms of a text, in order, stop words removed."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOP and len(w) > 1]


# Each word seen, as the term it gives ("" for a stop word or a single letter): indexing a
# document then costs a lookup a word, not the stop-word test and the stemmer (a catch-up
# indexes most of its events; with the plain dict below, tokenising took half the time).
_SEEN: dict[str, str] = {}
# A mind's vocabulary is some tens of thousands of words; past this the cache starts again,
# so a stream of unique words (numbers, identifiers) cannot grow it without bound.
SEEN_WORDS = 200_000


def term_counts(text: str) -> dict[str, int]:
    """Term frequencies of a document, in order of first appearance (as `Counter(terms(text))`)."""
    seen = _SEEN
    if len(seen) > SEEN_WORDS:
        seen.clear()
    counts: dict[str, int] = {}
    for word in _WORD.findall(text.lower()):
        term = seen.get(word)
        if term is None:
            term = seen[word] = "" if word in STOP or len(word) < 2 else stem(word)
        if term:
            counts[term] = counts.get(term, 0) + 1
    return counts
