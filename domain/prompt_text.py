"""Stored text inside a prompt: one line, no tag, no label of ours.

Every text in the memory block (messages, commitments, concepts, threads, the mind's name) was
written by someone else: a user, an imported conversation, an earlier reply. The block's frame is
ours: the `<memory>` tags, the day headings, one item per line opened by `#N [label]`, and
control lines (`COMMIT:` ...) only ever at the start of a line. So a stored text is shown on one
line (line breaks and other hidden characters written out as `\\n`, `\\u2028`, ...), any
tag-shaped `<` in it becomes `&lt;` (whatever the look-alike, case, spacing or zero-width
characters inside), and what goes inside a label's brackets cannot hold a bracket. A speaker of
an imported conversation whose name reads like one of our labels (`assistant`, `user`,
`commitment ...`) is marked `(imported)`, so it is never taken for the mind's own replies or the
user of the turn.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from mindledger.domain.text import HIDDEN, show_hidden

# `<` and what a reader (or a model) could take for it: NFKC folds the fullwidth and small forms
# to `<`; the others are look-alikes NFKC leaves alone.
_OPENERS = "<\ufe64\uff1c\u2039\u02c2\u27e8\u2329\u3008\u276e\u276c\u1438\u226e\u29fc"
_OPENER = re.compile(f"[{_OPENERS}]")
_SLASHES = "/\uff0f\u2044\u2215\u29f8\\\\!?"
_ESCAPED_OPENER = "&lt;"
_BRACKETS = str.maketrans({"[": "(", "]": ")", "\uff3b": "(", "\uff3d": ")"})
# Every label the memory block uses for its own items (`projections.retrieval.item_text`, the
# identity and the threads block) and the roles of a chat.
OWN_LABELS = (
    "user",
    "assistant",
    "system",
    "developer",
    "tool",
    "function",
    "you",
    "identity",
    "commitment",
    "thread",
    "concept",
    "rule",
    "triage",
    "message",
    "memory",
    "imported",
    "knowledge",
)
# Cyrillic and Greek letters drawn like the Latin ones of those labels.
_CONFUSABLES = str.maketrans(
    "аеосрхуіѕјкмтнвαεοριτκνυ",
    "aeocpxyisjkmthbaeopitkvu",
)


def _ignorable(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) in ("Cf", "Cc", "Mn", "Zl", "Zp")


def _untag(text: str) -> str:
    """`text` with every `<` that opens something tag-shaped (`<a`, `</a`, `<!`, `< / a`, with
    look-alikes and invisible characters anywhere in between) or ends the text written as
    `&lt;`."""
    if ("<" not in text and text.isascii()) or _OPENER.search(text) is None:
        return text
    out = list(text)
    for match in _OPENER.finditer(text):
        j = match.end()
        while j < len(text) and _ignorable(text[j]):
            j += 1
        if j < len(text) and unicodedata.normalize("NFKC", text[j])[:1] in _SLASHES:
            j += 1
            while j < len(text) and _ignorable(text[j]):
                j += 1
        # A hidden character right after `<` is written out as `\n`, `\u200b`...: a backslash
        # and a letter, which would read as a tag once shown.
        escaped = any(ch != "\t" and HIDDEN.match(ch) for ch in text[match.end() : j])
        # At the end, what follows is ours (a line break, then a heading or an item): a `<`
        # there would open a tag with it.
        if escaped or j == len(text) or text[j].isalpha():
            out[match.start()] = _ESCAPED_OPENER
    return "".join(out)


def one_line(text: str) -> str:
    """A stored text as it may appear inside the prompt: on one line, with no tag in it. Tabs
    stay; `one_line(one_line(t)) == one_line(t)`."""
    return show_hidden(_untag(text), keep="\t")


@lru_cache(maxsize=4096)  # a few speakers, labels and ids, over and over
def in_label(text: str) -> str:
    """A stored text inside a label's brackets (`[speaker]`): one line, no bracket."""
    return one_line(text).translate(_BRACKETS)


def _skeleton(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).casefold().translate(_CONFUSABLES)
    return "".join(ch for ch in folded if "a" <= ch <= "z")


@lru_cache(maxsize=4096)
def observed_speaker(name: str) -> str:
    """The label of someone speaking in an imported conversation: their name, marked
    `(imported)` when it reads like one of our own labels (`OWN_LABELS`, ignoring case,
    spacing, accents, compatibility forms and Cyrillic or Greek look-alikes)."""
    shown = in_label(name)
    if _skeleton(name).startswith(OWN_LABELS):
        return f"{shown} (imported)"
    return shown
