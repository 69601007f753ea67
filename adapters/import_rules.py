"""What an imported message must be, and how a re-import recognises one it already recorded.

Kept apart from the import flow so the rules stay the same wherever the flow lives.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from domain.errors import InvalidInputError
from domain.text import clean_text

# The roles of a chat transcript (OpenAI's message roles); anything else is refused, not guessed.
CHAT_ROLES = ("user", "assistant", "system", "tool")
MAX_MESSAGE_CHARS = 100_000

# Why a message was not added (the keys of `skipped_reasons` in the import's JSON).
ALREADY_IMPORTED = "already imported"
EMPTY_MESSAGE = "empty message"


def chat_role(value: Any, where: str) -> str:
    """A transcript line's role, lower-cased; InvalidInputError for any other value."""
    role = value.strip().lower() if isinstance(value, str) else None
    if role not in CHAT_ROLES:
        raise InvalidInputError(f"{where} has role {value!r}; use one of {', '.join(CHAT_ROLES)}")
    return role


def message_text(value: Any, where: str) -> str:
    """A message's text as it will be stored ('' when there is none: JSON null or blanks)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInputError(f"{where} has content that is not a string; give the text")
    if not value.strip():
        return ""
    try:
        return clean_text(value, "message", MAX_MESSAGE_CHARS)
    except InvalidInputError as e:
        raise InvalidInputError(f"{where}: {e}") from None


def chat_line_id(role: str, time: str | None, text: str, occurrence: int) -> str:
    """The original id of a transcript message: its role, stated time and text, and how many
    identical messages came before it in the file.

    It does not depend on the file's name, folder or line number, so a different file with the
    same name adds its messages, the same file re-imported (or grown, or moved) adds only its
    new lines, and a message said twice is kept twice."""
    key = json.dumps([role, time, text, occurrence], ensure_ascii=False)
    return "chat:" + hashlib.sha256(key.encode()).hexdigest()[:32]


def legacy_chat_line_id(file_name: str, line: int) -> str:
    """The id that imports before content ids gave a line (`history.jsonl:3`); a re-import
    recognises such a message when its speaker and text are the same (`Conversation.holds`)."""
    return f"{file_name}:{line}"


def skipped_reasons(already: int, empty: int) -> dict[str, int]:
    """The reasons messages were skipped, with their counts (reasons with none left out)."""
    reasons = {ALREADY_IMPORTED: already, EMPTY_MESSAGE: empty}
    return {reason: count for reason, count in reasons.items() if count}
