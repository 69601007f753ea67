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

Each conversation is stored as `chatgpt/<conversation id>` and each message under
`chatgpt:<message id>`, so importing the same export (or a later, longer one) adds only what
is new.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.chatgpt_content import message_content
from adapters.import_rules import (
    MAX_IMPORT_BYTES,
    import_bytes,
    message_text,
    message_time,
    skipped_reasons,
)
from domain.application import Mind
from domain.conversation import Observed
from domain.errors import InvalidInputError, MindError

MEMBER = "conversations.json"
# A member that inflates more than this many times over is refused as a zip bomb (real
# conversations.json files compress about 5-10 times).
MAX_RATIO = 200
SPEAKERS = ("user", "assistant")


@dataclass(frozen=True)
class ChatgptConversation:
    """One conversation's current branch, ready to record."""

    id: str
    title: str
    messages: list[Observed]


def export_json(path: Path) -> bytes:
    """The bytes of conversations.json: the file itself, or the member of an export's zip."""
    data = import_bytes(path)
    if not data.startswith(b"PK"):
        return data
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return _member(archive, path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as e:
        raise InvalidInputError(f"{path} is not a readable zip ({_short(e)})") from None
    except (OSError, ValueError, RuntimeError) as e:
        raise InvalidInputError(
            f"{path}: cannot read {MEMBER} from the zip ({_short(e)})"
        ) from None


def _member(archive: zipfile.ZipFile, path: Path) -> bytes:
    found = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == MEMBER]
    if not found:
        raise InvalidInputError(f"{path} holds no {MEMBER}; give a ChatGPT data export")
    info = min(found, key=lambda i: i.filename.count("/"))
    if info.file_size > MAX_IMPORT_BYTES or info.file_size > MAX_RATIO * max(
        info.compress_size, 1024
    ):
        raise InvalidInputError(
            f"{path}: {info.filename} would inflate to {info.file_size:,} bytes from "
            f"{info.compress_size:,}; refused (a zip bomb or not an export)"
        )
    with archive.open(info) as member:
        # The stated size can lie: never read more than it says (plus one byte to notice).
        data = member.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise InvalidInputError(f"{path}: {info.filename} is larger than the zip says; refused")
    return data


def parse_export(data: bytes, name: str, notes: Counter[str]) -> list[ChatgptConversation]:
    """Every conversation's current branch, or InvalidInputError naming what is not the shape
    of an export; `notes` counts what was skipped or summarised and why."""
    try:
        items = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise InvalidInputError(
            f"{name} is not JSON ({_short(e)}); give conversations.json"
        ) from None
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
        if observed is not None:
            started = observed.said_at
            messages.append(observed)
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
) -> Observed | None:
    if message is None:
        return None
    if not isinstance(message, dict):
        raise InvalidInputError(f"{where}: node {node_id!r} has a message that is not an object")
    author = _object(message.get("author"))
    role = author.get("role")
    meta = _object(message.get("metadata"))
    if role == "tool":
        notes["tool messages skipped"] += 1
        return None
    if role == "system" and not meta.get("is_user_system_message"):
        notes["system messages skipped"] += 1
        return None
    if role not in (*SPEAKERS, "system"):
        notes[f"messages by {str(role)[:40]!r} skipped"] += 1
        return None
    if role == "assistant" and message.get("recipient", "all") != "all":
        notes["tool calls skipped"] += 1
        return None
    if meta.get("is_visually_hidden_from_conversation"):
        notes["hidden messages skipped"] += 1
        return None
    text = message_content(message.get("content"), notes)
    if text is None:
        return None
    mid = message.get("id") if isinstance(message.get("id"), str) else node_id
    said_at = _time(message.get("create_time")) or before or datetime.fromtimestamp(0, UTC)
    here = f"{where} message {mid}"
    return Observed(role, message_text(text, here), message_time(said_at, here), f"chatgpt:{mid}")


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
        new, old = mind.import_conversation(f"chatgpt/{c.id}", speakers, iter(kept), progress)
        added, already = added + new, already + old
    return {
        "source": str(path),
        "conversations": len(conversations),
        "added": added,
        "skipped": already + empty,
        "skipped_reasons": skipped_reasons(already, empty),
        "notes": dict(sorted(notes.items())),
    }


def _short(e: BaseException) -> str:
    return str(e).splitlines()[0][:120] if str(e) else type(e).__name__
