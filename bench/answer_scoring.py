"""Scoring a visible reply against a gold answer, and telling a reply that loops.

Token F1 and its normalisation follow SQuAD's evaluation script (the LoCoMo paper scores answers
the same way): lower case, punctuation and the articles a/an/the removed, whitespace collapsed.
"""

from __future__ import annotations

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalise(text: str) -> str:
    """SQuAD's answer normalisation."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(reply: str, gold: str) -> float:
    """Token-overlap F1 of the normalised reply against the normalised gold answer."""
    said, wanted = normalise(reply).split(), normalise(gold).split()
    if not said or not wanted:
        return float(said == wanted)
    common = sum((Counter(said) & Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(said), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def contains_answer(reply: str, gold: str) -> bool:
    """Whether the normalised gold answer appears in the normalised reply as whole words."""
    wanted = normalise(gold)
    return bool(wanted) and f" {wanted} " in f" {normalise(reply)} "


def repeats_itself(text: str, n: int = 5, times: int = 3) -> bool:
    """A reply loops when some run of `n` words comes back `times` times or more, or when a
    line of a dozen characters or more is written twice (how the 135M model's loops look: the
    same sentence or list item again and again)."""
    words = re.findall(r"\w+", text.lower())
    grams = Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    if grams and max(grams.values()) >= times:
        return True
    lines = [line.strip().lower() for line in text.splitlines() if len(line.strip()) >= 12]
    return len(lines) != len(set(lines))
