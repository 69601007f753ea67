"""What a caller sends beside its message: its own system prompt and the conversation it holds
(earlier user and assistant messages), both for this turn only.

The caller's system prompt goes after the mind's own system prompt, in a block of its own
whose every line is quoted (`> `) and made safe as stored text is (`prompt_text.one_line`: no
tag, no hidden character), so it can neither close nor open the memory block or its own, nor
start an item line. The earlier messages are the conversation the model sees before the
message, as the caller sent them (docs/decisions/0020-a-callers-conversation.md says how they
relate to the mind's own history): user and assistant messages, an assistant's tool calls and
the tool results that answered them. A user or assistant message (the turn's own too) may
carry its speaker's `name`, as OpenAI's messages do (several agents of one conversation, each
named): checked as OpenAI checks it (NAME_PATTERN: letters, digits, `_` and `-`, so it can
hold no tag, quote or line break) and sent as the message's `name`, never written into text.
The tools it offers and the results it sends back as a turn's message are in
`domain/tool_use.py`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mindledger.domain.errors import InvalidInputError
from mindledger.domain.prompt_text import one_line
from mindledger.domain.text import clean_text
from mindledger.domain.tool_use import ToolRequest, checked_call, checked_result
from mindledger.domain.turn import MESSAGE_LIMIT

HISTORY_ROLES = ("user", "assistant", "tool")
MAX_HISTORY = 1000  # messages
MAX_HISTORY_CHARS = 1_000_000
# A message's speaker name, as OpenAI's API takes it.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")

CLIENT_OPEN = "<client-instructions>"
CLIENT_END = "</client-instructions>"
CLIENT_PREAMBLE = (
    f"{CLIENT_OPEN}\n"
    "Instructions from the program you are answering through, one quoted line each. Follow "
    "them where they do not conflict with the rules above; they are not part of your memory.\n"
)


@dataclass(frozen=True)
class ClientChat:
    """A caller's system prompt (None: none), earlier messages ({"role", "content"}, an
    assistant's with `tool_calls`, a tool's with `tool_call_id`), the tools it offers, and the
    tool results that are this turn's message (none: the message is text). A user or
    assistant message of `history` may hold its speaker's `name`; `name` is the turn's own
    message's speaker (None: unnamed)."""

    system: str | None = None
    history: tuple[dict[str, Any], ...] = ()
    tooling: ToolRequest = field(default_factory=ToolRequest)
    results: tuple[dict[str, str], ...] = ()
    name: str | None = None

    def __bool__(self) -> bool:
        return (
            self.system is not None
            or self.name is not None
            or bool(self.history)
            or bool(self.tooling)
            or bool(self.results)
        )


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


def checked_name(value: Any, where: str) -> str | None:
    """A speaker's name (None: none), as OpenAI takes it: 1 to 64 letters, digits, `_` or
    `-`. Nothing else, so a name can never be prompt structure (a tag, a quote, a line)."""
    if value is None:
        return None
    if not isinstance(value, str) or not NAME_PATTERN.fullmatch(value):
        raise InvalidInputError(
            f"`{where}` must be 1 to 64 letters, digits, `_` or `-` (a speaker's name)",
            param=where,
        )
    return value


def _message(n: int, message: Any) -> dict[str, Any]:
    where = f"history[{n}]"
    role = message.get("role") if isinstance(message, Mapping) else None
    if role == "tool":
        rest = {k: v for k, v in message.items() if k != "role"}
        return {"role": "tool", **checked_result(rest, where, where)}
    calls = message.get("tool_calls") if role == "assistant" else None
    keys = {"role", "content", "tool_calls"} if calls is not None else {"role", "content"}
    given = set(message) - {"name"} if isinstance(message, Mapping) else None
    if given != keys:
        raise InvalidInputError(
            f"`{where}` must be an object with exactly `role` and `content`"
            " (an assistant's may have `tool_calls`; either may have `name`)",
            param=where,
        )
    if role not in HISTORY_ROLES:
        raise InvalidInputError(
            f"`{where}.role` must be one of {', '.join(HISTORY_ROLES)}", param=f"{where}.role"
        )
    name = checked_name(message.get("name"), f"{where}.name")
    read = _said(where, role, message["content"], calls)
    return {**read, "name": name} if name is not None else read


def _said(where: str, role: str, content: Any, calls: Any) -> dict[str, Any]:
    """A user or assistant message's content (and an assistant's tool calls), checked."""
    if calls is not None:
        if not isinstance(calls, list) or not calls:
            raise InvalidInputError(f"`{where}.tool_calls` must be a non-empty list", param=where)
        checked = [checked_call(c, f"{where}.tool_calls[{k}]", where) for k, c in enumerate(calls)]
        if content is None or content == "":
            return {"role": role, "content": None, "tool_calls": checked}
    if not isinstance(content, str) or not content.strip():
        raise InvalidInputError(f"`{where}.content` must be a non-empty text", param=where)
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in content):
        raise InvalidInputError(f"`{where}.content` is not valid UTF-8", param=where)
    _storable(content, where)
    if calls is not None:
        return {"role": role, "content": content, "tool_calls": checked}
    return {"role": role, "content": content}


def _storable(content: str, where: str) -> None:
    """Refuse a user or assistant message that no message could hold (a control character,
    over MESSAGE_LIMIT): the mind records an unseen one as observed after the turn, and a
    refusal there came after the turn was recorded (and streamed)."""
    try:
        clean_text(content, f"`{where}.content`", MESSAGE_LIMIT)
    except InvalidInputError as e:
        raise InvalidInputError(str(e), param=where) from None


def _chars(message: Mapping[str, Any]) -> int:
    calls = message.get("tool_calls") or ()
    return len(message.get("content") or "") + sum(len(c["function"]["arguments"]) for c in calls)


def checked_chat(
    system: Any = None,
    history: Sequence[Any] | None = None,
    tooling: ToolRequest | None = None,
    results: tuple[dict[str, str], ...] = (),
    name: Any = None,
) -> ClientChat:
    """A caller's system prompt and earlier messages, checked (InvalidInputError names the
    argument at fault as `param`: `system`, `history[N]`, `history[N].name`, `name`), with its
    tools and tool results (checked already: `tool_use.checked_tools`, `checked_results`) and
    the turn's own message's speaker name."""
    speaker = checked_name(name, "name")
    if speaker is not None and results:
        raise InvalidInputError(
            "`name` names the speaker of a text message; tool results have none", param="name"
        )
    given = list(history or ())
    if len(given) > MAX_HISTORY:
        raise InvalidInputError(
            f"`history` holds at most {MAX_HISTORY} earlier messages", param="history"
        )
    messages = tuple(_message(n, m) for n, m in enumerate(given))
    if sum(_chars(m) for m in messages) > MAX_HISTORY_CHARS:
        raise InvalidInputError(
            f"`history` holds more than {MAX_HISTORY_CHARS:,} characters", param="history"
        )
    _answers_calls(messages, results)
    return ClientChat(_system(system), messages, tooling or ToolRequest(), results, speaker)


def _answers_calls(
    history: Sequence[Mapping[str, Any]], results: Sequence[Mapping[str, str]]
) -> None:
    """Each tool message (and tool result) answers a call of the assistant message before it,
    as OpenAI requires (a provider refuses a stray one late, after the message is recorded)."""
    asked: set[str] = set()
    tools = [(f"history[{n}]", m) for n, m in enumerate(history)]
    tools += [(f"tool_results[{n}]", {"role": "tool", **r}) for n, r in enumerate(results)]
    for where, message in tools:
        if message["role"] == "assistant":
            asked = {c["id"] for c in message.get("tool_calls") or ()}
        elif message["role"] == "user":
            asked = set()
        elif message["tool_call_id"] not in asked:
            raise InvalidInputError(
                f"`{where}.tool_call_id` answers no tool call of the assistant message before it",
                param=f"{where}.tool_call_id",
            )


def client_block(system: str) -> str:
    """The caller's system prompt as the block that follows the mind's own: each line quoted
    and one line of stored text (`one_line`), so nothing in it is structure."""
    quoted = "\n".join(f"> {one_line(line)}" for line in system.split("\n"))
    return f"{CLIENT_PREAMBLE}{quoted}\n{CLIENT_END}"
