"""How each kind of memory item reads in context (one formatter per kind)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

# A channel's result: (position, kind, text, source id, reason[, day]); a message carries the
# day it was said, which heads its group in the rendered memory (`projections.context.fit`).
Found = tuple[Any, ...]


def message_text(speaker: str | None, text: str) -> str:
    """A message: speaker and text (the day heads the message's group when rendered)."""
    return f"[{speaker or 'message'}] {text}"


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
    """A message as a channel finds it."""
    return (position, "message", message_text(speaker, text), source_id, reason, day_of(time))


def commitment_text(cid: str, text: str) -> str:
    """An open commitment."""
    return f"[commitment {cid} open] {text}"


def thread_text(tid: str, status: str, label: str, content: str) -> str:
    """A thread found by its words (the threads block has its own, with tension)."""
    return f"[thread {tid} {status}] {label}: {content}"


def concept_text(token: str, definition: str) -> str:
    """A concept's current definition."""
    return f"[concept {token}] {definition}"
