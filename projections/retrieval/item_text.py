"""How each kind of memory item reads in context (one formatter per kind).

Every stored field goes through `domain.prompt_text`: a text is shown on one line with no tag in
it, and a field inside a label's brackets cannot close them, so no stored text can end the
memory block, forge a heading or a label, or start a line (with `COMMIT:` or anything else).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mindledger.domain.prompt_text import in_label, observed_speaker, one_line

# A channel's result: (position, kind, text, source id, reason[, day]); a message carries the
# day it was said, which heads its group in the rendered memory
# (`projections.retrieval.context.fit`).
Found = tuple[Any, ...]


def message_text(speaker: str | None, text: str, observed: bool = False) -> str:
    """A message: speaker and text (the day heads the message's group when rendered).
    `observed`: said in an imported conversation (it has an original id), whose speakers are
    labelled apart from the user of a turn and the mind's own replies."""
    if speaker is None:
        label = "message"
    else:
        label = observed_speaker(speaker) if observed else in_label(speaker)
    return f"[{label}] {one_line(text)}"


def day_of(time: datetime | None) -> str | None:
    """The day a message was said: what questions about time ask for."""
    return f"{time:%Y-%m-%d}" if time else None


def said(
    position: int,
    speaker: str | None,
    time: datetime | None,
    text: str,
    source_id: str | None,
    reason: str,
) -> Found:
    """A message as a channel finds it (only imported messages have a `source_id`)."""
    shown = message_text(speaker, text, observed=source_id is not None)
    return (position, "message", shown, source_id, reason, day_of(time))


def commitment_text(cid: str, text: str) -> str:
    """An open commitment."""
    return f"[commitment {in_label(cid)} open] {one_line(text)}"


def thread_text(tid: str, status: str, label: str, content: str) -> str:
    """A thread found by its words (the threads block has its own, with tension)."""
    return f"[thread {in_label(tid)} {in_label(status)}] {one_line(label)}: {one_line(content)}"


def concept_text(token: str, definition: str) -> str:
    """A concept's current definition."""
    return f"[concept {in_label(token)}] {one_line(definition)}"


def identity_text(name: str) -> str:
    """Who the mind is."""
    return f"[identity] Your name is {one_line(name)}."


# An imported record is shown cut to this many characters (PMM records can be long JSON).
RECORD_CHARS = 600


def record_text(format: str, foreign_id: str, kind: str, content: str) -> str:
    """A record kept from an imported foreign ledger, with its kind and original id."""
    label = f"{in_label(format)} {in_label(kind)} {in_label(foreign_id)}"
    return f"[imported {label}] {one_line(content[:RECORD_CHARS])}"
