"""Concepts named in a text: a concept's token or alias counts as named when the text holds it
as a run of whole words (case, surrounding punctuation and a possessive 's ignored).

Substring matching (the first design) had to test every concept against the text, 7.5 ms at
214,000 concepts, and found "cat" in "concatenate"; keys are looked up by equality instead.
"""

from __future__ import annotations

EDGES = ".,!?;:\"'()[]{}<>*`"
LONGEST = 8  # words in a name; longer names are never matched


def _words(text: str) -> list[str]:
    return [w for w in (w.strip(EDGES) for w in text.lower().split()) if w]


def name_key(name: str) -> str:
    """The key a token or alias is found by."""
    words = name.lower().split()
    if len(words) == 1:  # a token (every concept has one): `_words`' passes for one word
        return words[0].strip(EDGES)
    return " ".join(_words(name))


def keys_in(text: str) -> list[str]:
    """Every key a name held by `text` could have (runs of up to LONGEST words)."""
    words = _words(text)
    variants = [[w, w[:-2]] if w.endswith(("'s", "\u2019s")) and len(w) > 2 else [w] for w in words]
    found: set[str] = set()
    for i in range(len(words)):
        runs = [""]
        for j in range(i, min(i + LONGEST, len(words))):
            runs = [f"{r} {v}".strip() for r in runs for v in variants[j]]
            found.update(runs)
    return sorted(found)
