"""Conversations from elsewhere brought into an existing mind as observed messages, with no model
calls; re-importing adds nothing new (`mind import locomo|chat|pmm|chatgpt`).

The PMM and ChatGPT files are read whole before their size is known: `on_total` hears how many
items there are once it is, `on_batch` how many more are done."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mindledger.compose import Home, open_mind

Count = Callable[[int], None]


def import_locomo(home: Home, path: Path, sample: str | None = None) -> list[dict[str, Any]]:
    """Import the LoCoMo benchmark file (only `sample`, e.g. conv-26, when given): every turn
    with its speaker, session time and dia_id (what `mind import locomo --json` prints)."""
    from mindledger.adapters import importers

    mind = open_mind(home)
    try:
        return importers.import_locomo(mind, path, sample)
    finally:
        mind.close()


def import_chat(home: Home, path: Path, conversation: str | None = None) -> dict[str, Any]:
    """Import a JSONL transcript, one {"role", "content", "time"?} object per line, into the
    conversation it contains (or the one named `conversation`); what `mind import chat
    --json` prints."""
    from mindledger.adapters import importers

    mind = open_mind(home)
    try:
        return importers.import_chat(mind, path, conversation=conversation)
    finally:
        mind.close()


def import_pmm(
    home: Home,
    path: Path,
    accept_broken: bool = False,
    on_batch: Count | None = None,
    on_total: Count | None = None,
) -> dict[str, Any]:
    """Import a Persistent Mind Model ledger export after verifying its hash chain; a broken
    chain is refused (nothing written) unless `accept_broken`, which records the breaks with
    it (what `mind import pmm --json` prints)."""
    from mindledger.adapters import pmm_import

    mind = open_mind(home)
    try:
        return pmm_import.import_pmm(mind, path, accept_broken, on_batch, on_total)
    finally:
        mind.close()


def import_chatgpt(
    home: Home, path: Path, on_batch: Count | None = None, on_total: Count | None = None
) -> dict[str, Any]:
    """Import a ChatGPT data export (its conversations.json, or the export's zip): each
    conversation's current branch (what `mind import chatgpt --json` prints)."""
    from mindledger.adapters import chatgpt_import

    mind = open_mind(home)
    try:
        return chatgpt_import.import_chatgpt(mind, path, on_batch, on_total)
    finally:
        mind.close()
