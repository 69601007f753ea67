"""`mind import chatgpt`: a ChatGPT data export (its conversations.json, or the export's zip).

Each conversation is a tree of message nodes (`mapping`: id -> {message, parent, children});
what the user saw is the branch from `current_node` up to the root, read root first. Edited
and regenerated branches are not imported. What is kept:

- user and assistant messages, with their times (`create_time`, seconds since 1970; a message
  without one takes the time before it, else the conversation's);
- a system message only when the user wrote it (`is_user_system_message`: custom
  instructions); ChatGPT's own system prompt is skipped and counted;
- tool messages (browsing results, code output) and the assistant's calls to tools (a recipient
  other than "all") are skipped and counted, as are hidden messages and reasoning summaries;
- non-text parts (images, audio, files) become a placeholder such as "[image]", counted.

Each conversation is stored as `chatgpt/<conversation id>` (with its title) and each message
under `chatgpt:<message id>`, so importing the same export (or a later, longer one) adds only
what is new.

A message that cannot be stored as it is does not stop the import: its control characters
(an ANSI colour code in pasted terminal output, a form feed, NUL) are stored as escapes
(`\x1b`), and a message over 100,000 characters is stored as several parts
(`chatgpt:<id>`, `chatgpt:<id>/2`, ...); both are counted in `notes`.

Branches: what was recorded stays recorded (events are facts). When a re-import finds that
the user switched to another branch (a regenerated answer), the new branch's messages are
added and the messages recorded earlier that are no longer on the current branch are counted
in `notes` ("messages recorded earlier, now on another branch (kept)"), never silently mixed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mindledger.adapters.chatgpt_content import message_content
from mindledger.adapters.chatgpt_zip import export_json
from mindledger.adapters.import_rules import (
    load_json,
    message_time,
    skipped_reasons,
    storable_parts,
)
from mindledger.domain.application import Mind
from mindledger.domain.conversation import Observed
from mindledger.domain.errors import InvalidInputError, MindError
from mindledger.domain.import_kept import MESSAGES, noting_kept
from mindledger.domain.redaction import REDACTED, redact

SPEAKERS = ("user", "assistant")
# A role shown in a note: at most this long and only word characters, dots, dashes, spaces.
MAX_ROLE_SHOWN = 40
PLAIN_ROLE = re.compile(r"[\w. -]*")
OTHER_BRANCH = "messages recorded earlier, now on another branch (kept)"


@dataclass(frozen=True)
class ChatgptConversation:
    """One conversation's current branch, ready to record."""

    id: str
    title: str
    messages: list[Observed]


def parse_export(data: bytes, name: str, notes: Counter[str]) -> list[ChatgptConversation]:
    """Every conversation's current branch, or InvalidInputError naming what is not the shape
    of an export; `notes` counts what was skipped or summarised and why."""
    items = load_json(data, f"{name} is not JSON ({{}}); give conversations.json")
    if isinstance(items, dict) and "mapping" in items:
        items = [items]
    if not isinstance(items, list):
        raise InvalidInputError(f"{name} is not a ChatGPT export (a JSON array of conversations)")
    return [_conversation(item, f"{name}: conversation {n}", notes) for n, item in enumerate(items)]


def _conversation(item: Any, where: str, notes: Counter[str]) -> ChatgptConversation:
    if not isinstance(item, dict) or not isinstance(item.get("mapping"), dict):
        raise InvalidInputError(f"{where} is not an object with a 'mapping' of message nodes")
    cid = item.get("conversation_id") or item.get("id")
    if not isinstance(cid, str) or not cid.strip():
        raise InvalidInputError(f"{where} has no string 'conversation_id' or 'id'")
    where = f"{where} ({cid})"
    title = str(item["title"]) if isinstance(item.get("title"), str) else ""
    started = _time(item.get("create_time"))
    messages: list[Observed] = []
    for node_id, message in _branch(item["mapping"], item.get("current_node"), where):
        observed = _message(message, node_id, started, where, notes)
        if observed:
            started = observed[0].said_at
            messages.extend(observed)
    return ChatgptConversation(cid, title, messages)


def _branch(mapping: dict[str, Any], current: Any, where: str) -> list[tuple[str, Any]]:
    """The nodes from the root to `current` (the last leaf when the export names none)."""
    if current is None:
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            return []
        current = leaves[-1]
    if not isinstance(current, str) or current not in mapping:
        raise InvalidInputError(f"{where}: current_node {current!r} is not in its mapping")
    branch: list[tuple[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            raise InvalidInputError(f"{where}: node {node_id!r} is missing or not an object")
        if node_id in seen:
            raise InvalidInputError(f"{where}: the parents of node {node_id!r} form a loop")
        seen.add(node_id)
        branch.append((node_id, node.get("message")))
        node_id = node.get("parent")
        if node_id is not None and not isinstance(node_id, str):
            raise InvalidInputError(f"{where}: a node's parent is not a string")
    return branch[::-1]


def _message(
    message: Any, node_id: str, before: datetime | None, where: str, notes: Counter[str]
) -> list[Observed]:
    """The message as stored here: none (skipped, counted), one, or several parts."""
    if message is None:
        return []
    if not isinstance(message, dict):
        raise InvalidInputError(f"{where}: node {node_id!r} has a message that is not an object")
    author = _object(message.get("author"))
    role = author.get("role")
    meta = _object(message.get("metadata"))
    skipped = _skipped(role, meta, message)
    if skipped is not None:
        notes[skipped] += 1
        return []
    text = message_content(message.get("content"), notes)
    if text is None:
        return []
    mid = message.get("id") if isinstance(message.get("id"), str) else node_id
    said_at = _time(message.get("create_time")) or before or datetime.fromtimestamp(0, UTC)
    said_at = message_time(said_at, f"{where} message {mid}")
    parts, speaker = storable_parts(text, notes), str(role)
    if not parts:
        return [Observed(speaker, "", said_at, f"chatgpt:{mid}")]  # counted as empty
    return [
        Observed(speaker, part, said_at, f"chatgpt:{mid}" + (f"/{n}" if n > 1 else ""))
        for n, part in enumerate(parts, 1)
    ]


def _skipped(role: Any, meta: dict[str, Any], message: dict[str, Any]) -> str | None:
    """Why a message is not imported (its note), or None when it is."""
    if role == "tool":
        return "tool messages skipped"
    if role == "system" and not meta.get("is_user_system_message"):
        return "system messages skipped"
    if role not in (*SPEAKERS, "system"):
        return f"messages by {_shown_role(role)} skipped"
    if role == "assistant" and message.get("recipient", "all") != "all":
        return "tool calls skipped"
    if meta.get("is_visually_hidden_from_conversation"):
        return "hidden messages skipped"
    return None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _time(value: Any) -> datetime | None:
    """A `create_time` (seconds since 1970), or None when missing or not a usable time."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        at = datetime.fromtimestamp(value, UTC)
        message_time(at, "")
    except (ValueError, OverflowError, OSError, MindError):
        return None
    return at


def import_chatgpt(
    mind: Mind,
    path: Path,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Import every conversation of an export (all read and checked before anything is
    written); returns what the import did."""
    notes: Counter[str] = Counter()
    conversations = parse_export(export_json(path), str(path), notes)
    if on_total:
        on_total(sum(len(c.messages) for c in conversations))
    added = already = empty = 0
    for c in conversations:
        kept = [m for m in c.messages if m.text]
        empty += len(c.messages) - len(kept)
        if not kept:
            continue
        speakers = sorted({m.speaker for m in kept})
        branch = {m.source_id for m in c.messages}

        def elsewhere(recorded: set[str], branch: set[str] = branch) -> None:
            if recorded - branch:
                notes[OTHER_BRANCH] += len(recorded - branch)

        with noting_kept(added, MESSAGES):  # the conversations before it stay
            new, old = mind.import_conversation(
                f"chatgpt/{c.id}",
                speakers,
                iter(kept),
                progress,
                title=_title(c.title),
                recorded=elsewhere,
            )
        added, already = added + new, already + old
    return {
        "source": str(path),
        "conversations": len(conversations),
        "added": added,
        "skipped": already + empty,
        "skipped_reasons": skipped_reasons(already, empty),
        # What was skipped, summarised or stored differently (escaped, split), with counts.
        "notes": dict(sorted(notes.items())),
    }


def _shown_role(role: Any) -> str:
    """An unknown role as a note may show it: redacted (before any cut, which would hide a key
    from the redaction), and only when what is left is a short plain word; else its length."""
    shown = redact(str(role))
    if len(shown) <= MAX_ROLE_SHOWN and PLAIN_ROLE.fullmatch(shown.replace(REDACTED, "")):
        return repr(shown)
    return f"a role of {len(str(role)):,} characters"


def _title(title: str) -> str | None:
    """A title as stored (its control characters escaped), or None when it has none."""
    parts = storable_parts(title[:1000], Counter())
    return parts[0] if parts else None
