"""How each kind of memory item reads in context (one formatter per kind)."""

from __future__ import annotations

from datetime import datetime


def message_text(speaker: str | None, time: datetime | None, text: str) -> str:
    """A message: speaker, the day it was said, the text."""
    when = f" {time:%Y-%m-%d}" if time else ""  # the day is what questions ask about
    return f"[{speaker or 'message'}{when}] {text}"


def commitment_text(cid: str, text: str) -> str:
    """An open commitment."""
    return f"[commitment {cid} open] {text}"


def thread_text(tid: str, status: str, label: str, content: str) -> str:
    """A thread found by its words (the threads block has its own, with tension)."""
    return f"[thread {tid} {status}] {label}: {content}"


def concept_text(token: str, definition: str) -> str:
    """A concept's current definition."""
    return f"[concept {token}] {definition}"
