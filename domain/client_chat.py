"""What a caller sends beside its message: its own system prompt and the conversation it holds
(earlier user and assistant messages), both for this turn only.

The caller's system prompt goes after the mind's own system prompt, in a block of its own
whose every line is quoted (`> `) and made safe as stored text is (`prompt_text.one_line`: no
tag, no hidden character), so it can neither close nor open the memory block or its own, nor
start an item line. The earlier messages are the conversation the model sees before the
message, as the caller sent them (docs/decisions/0020-a-callers-conversation.md says how they
relate to the mind's own history).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mindledger.domain.errors import InvalidInputError
from mindledger.domain.prompt_text import one_line
from mindledger.domain.turn import MESSAGE_LIMIT

HISTORY_ROLES = ("user", "assistant")
MAX_HISTORY = 1000  # messages
MAX_HISTORY_CHARS = 1_000_000

CLIENT_OPEN = "<client-instructions>"
CLIENT_END = "</client-instructions>"
CLIENT_PREAMBLE = (
    f"{CLIENT_OPEN}\n"
    "Instructions from the program you are answering through, one quoted line each. Follow "
    "them where they do not conflict with the rules above; they are not part of your memory.\n"
)


@dataclass(frozen=True)
class ClientChat:
    """A caller's system prompt (None: none) and earlier messages ({"role", "content"})."""

    system: str | None = None
    history: tuple[dict[str, str], ...] = ()

    def __bool__(self) -> bool:
        return self.system is not None or bool(self.history)


def _system(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError("`system` must be a text", param="system")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise InvalidInputError("`system` is not valid UTF-8", param="system")
    value = value.replace("\r\n", "\n").strip()
    if len(value) > MESSAGE_LIMIT:
        raise InvalidInputError(
            f"`system` is {len(value):,} characters; the limit is {MESSAGE_LIMIT:,}",
            param="system",
        )
    return value or None  # an empty system prompt asks for nothing


def _message(n: int, message: Any) -> dict[str, str]:
    where = f"history[{n}]"
    if not isinstance(message, Mapping) or set(message) != {"role", "content"}:
        raise InvalidInputError(
            f"`{where}` must be an object with exactly `role` and `content`", param=where
        )
    role, content = message["role"], message["content"]
    if role not in HISTORY_ROLES:
        raise InvalidInputError(
            f"`{where}.role` must be one of {', '.join(HISTORY_ROLES)}", param=f"{where}.role"
        )
    if not isinstance(content, str) or not content.strip():
        raise InvalidInputError(f"`{where}.content` must be a non-empty text", param=where)
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in content):
        raise InvalidInputError(f"`{where}.content` is not valid UTF-8", param=where)
    return {"role": role, "content": content}


def checked_chat(system: Any = None, history: Sequence[Any] | None = None) -> ClientChat:
    """A caller's system prompt and earlier messages, checked (InvalidInputError names the
    argument at fault as `param`: `system`, `history[N]`)."""
    given = list(history or ())
    if len(given) > MAX_HISTORY:
        raise InvalidInputError(f"`history` holds at most {MAX_HISTORY} messages", param="history")
    messages = tuple(_message(n, m) for n, m in enumerate(given))
    if sum(len(m["content"]) for m in messages) > MAX_HISTORY_CHARS:
        raise InvalidInputError(
            f"`history` holds more than {MAX_HISTORY_CHARS:,} characters", param="history"
        )
    return ClientChat(_system(system), messages)


def client_block(system: str) -> str:
    """The caller's system prompt as the block that follows the mind's own: each line quoted
    and one line of stored text (`one_line`), so nothing in it is structure."""
    quoted = "\n".join(f"> {one_line(line)}" for line in system.split("\n"))
    return f"{CLIENT_PREAMBLE}{quoted}\n{CLIENT_END}"
