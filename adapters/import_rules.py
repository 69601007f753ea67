"""What an imported message must be, and how a re-import recognises one it already recorded.

Kept apart from the import flow so the rules stay the same wherever the flow lives.
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from mindledger.domain.clock import EARLIEST_YEAR, LATEST_YEAR, parse_time
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.text import clean_text

# The roles of a chat transcript (OpenAI's message roles); anything else is refused, not guessed.
CHAT_ROLES = ("user", "assistant", "system", "tool")
MAX_MESSAGE_CHARS = 100_000
# Python reads integers of at most 4,300 digits (sys.int_info.default_max_str_digits).
MAX_NUMBER_DIGITS = 4300
# An import is read whole before anything is written; LoCoMo's ten conversations are 2.8 MB.
MAX_IMPORT_BYTES = 512 * 1024 * 1024

# Why JSON nested past Python's stack (a few thousand levels: a few KB) is refused.
TOO_DEEP = "it is nested too deeply to read"

# Why a message was not added (the keys of `skipped_reasons` in the import's JSON).
ALREADY_IMPORTED = "already imported"
EMPTY_MESSAGE = "empty message"


def load_json(data: bytes, refusal: str) -> Any:
    """`data` parsed as JSON, or InvalidInputError(`refusal` with `{}` the parser's reason).

    A number too long for Python to read (over 4,300 digits) is refused in our words, not with
    Python's advice to raise its limit."""
    try:
        return json.loads(data, parse_int=_whole_number)
    except InvalidInputError:
        raise
    except RecursionError:
        raise InvalidInputError(refusal.format(TOO_DEEP)) from None
    except ValueError as e:
        reason = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise InvalidInputError(refusal.format(reason)) from None


def _whole_number(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise InvalidInputError(
            f"the file holds a number of {len(digits):,} digits, more than an export holds "
            f"({MAX_NUMBER_DIGITS:,}); it is not an export"
        )
    return int(digits)


def chat_role(value: Any, where: str) -> str:
    """A transcript line's role, lower-cased; InvalidInputError for any other value."""
    role = value.strip().lower() if isinstance(value, str) else None
    if role not in CHAT_ROLES:
        raise InvalidInputError(f"{where} has role {value!r}; use one of {', '.join(CHAT_ROLES)}")
    return role


def message_text(value: Any, where: str) -> str:
    """A message's text as it will be stored ('' when there is none: JSON null or blanks), with
    \r\n and \r line ends as \n; other control characters are refused."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInputError(f"{where} has content that is not a string; give the text")
    # CRLF (and old-Mac CR) line ends are common in exported chats: they are line breaks.
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    if not value.strip():
        return ""
    try:
        return clean_text(value, "message", MAX_MESSAGE_CHARS)
    except InvalidInputError as e:
        raise InvalidInputError(f"{where}: {e}") from None


# Control characters other than newline and tab (the ones `clean_text` refuses).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATES = re.compile("[\ud800-\udfff]")
# What `storable_parts` did, as counted in an import's notes.
ESCAPED = "messages with control characters stored as escapes (\\x1b)"
SPLIT = f"messages over {MAX_MESSAGE_CHARS:,} characters stored as several parts"


def storable_parts(value: str, notes: Counter[str]) -> list[str]:
    """A foreign message as texts a conversation can store, nothing dropped: control
    characters written out as escapes (a backslash, x, two hex digits), a lone
    surrogate as U+FFFD, and a message over MAX_MESSAGE_CHARS split into parts of at most
    that; each change counted in `notes`. Blank parts are left out."""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    cleaned = _SURROGATES.sub("\ufffd", _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", value))
    if cleaned != value:
        notes[ESCAPED] += 1
    parts = [cleaned[i : i + MAX_MESSAGE_CHARS] for i in range(0, len(cleaned), MAX_MESSAGE_CHARS)]
    if len(parts) > 1:
        notes[SPLIT] += 1
    return [part for part in parts if part.strip()]


def message_time(value: str | datetime, where: str) -> datetime:
    """A message's stated time (ISO-8601 text, or already parsed), in the years a fixed clock
    takes (MIND_NOW): year 1 or 9999 is a broken export, and would break the activity plot."""
    try:
        at = parse_time(value) if isinstance(value, str) else value
    except InvalidInputError as e:
        raise InvalidInputError(f"{where}: {e}") from None
    if not EARLIEST_YEAR <= at.year <= LATEST_YEAR:
        raise InvalidInputError(
            f"{where}: time {str(value)!r} is outside the years {EARLIEST_YEAR} to {LATEST_YEAR}"
        )
    return at


def chat_line_id(role: str, time: str | None, text: str, occurrence: int) -> str:
    """The original id of a transcript message: its role, stated time and text, and how many
    identical messages came before it in the file.

    It does not depend on the file's name, folder or line number, so a different file with the
    same name adds its messages, the same file re-imported (or grown, or moved) adds only its
    new lines, and a message said twice is kept twice."""
    key = json.dumps([role, time, text, occurrence], ensure_ascii=False)
    return "chat:" + hashlib.sha256(key.encode()).hexdigest()[:32]


def skipped_reasons(already: int, empty: int) -> dict[str, int]:
    """The reasons messages were skipped, with their counts (reasons with none left out)."""
    reasons = {ALREADY_IMPORTED: already, EMPTY_MESSAGE: empty}
    return {reason: count for reason, count in reasons.items() if count}


def _json_kind(value: Any) -> str:
    """What a parsed JSON value is, as JSON calls it."""
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    if value is None:
        return "null"
    return "a list" if isinstance(value, list) else kinds.get(type(value), "an object")


def _locomo_fault(sample: Any) -> str | None:
    """What in one LoCoMo sample is not the shape the importer reads, or None."""
    if not isinstance(sample, dict):
        return f"is {_json_kind(sample)}, not an object"
    if not isinstance(sample.get("sample_id"), str):
        return "has no string 'sample_id'"
    conv = sample.get("conversation")
    if not isinstance(conv, dict):
        return "has no 'conversation' object"
    for speaker in ("speaker_a", "speaker_b"):
        if not isinstance(conv.get(speaker), str):
            return f"has no string 'conversation.{speaker}'"
    for key, turns in conv.items():
        if not key.startswith("session_") or key.endswith("date_time"):
            continue
        number = key.split("_")[1]
        if not (number.isascii() and number.isdigit()):
            return f"has key {key!r}, not session_<number>"
        if not isinstance(conv.get(f"{key}_date_time"), str):
            return f"has no string '{key}_date_time'"
        if not isinstance(turns, list):
            return f"has '{key}' that is not a list of turns"
        for index, turn in enumerate(turns):
            fault = _locomo_turn_fault(turn)
            if fault is not None:
                return f"has turn {index} of '{key}' {fault}"
    return None


def _locomo_turn_fault(turn: Any) -> str | None:
    if not isinstance(turn, dict):
        return f"that is {_json_kind(turn)}, not an object"
    for field in ("speaker", "dia_id"):
        if not isinstance(turn.get(field), str):
            return f"without a string '{field}'"
    if not isinstance(turn.get("blip_caption"), str | None):
        return "whose 'blip_caption' is not a string"
    return None


def check_locomo_shape(data: Any, file: str) -> list[dict[str, Any]]:
    """`data` as a LoCoMo file's samples, or InvalidInputError naming the first sample (and key)
    that is not the shape the importer reads, so a wrong file is refused before anything is
    written."""
    if not isinstance(data, list):
        raise InvalidInputError(
            f"{file} does not look like locomo10.json (a list of samples); give a LoCoMo file"
        )
    if not data:
        raise InvalidInputError(f"no conversations in {file}")
    for index, sample in enumerate(data):
        fault = _locomo_fault(sample)
        if fault is not None:
            raise InvalidInputError(
                f"{file}: sample {index} {fault}; fix the file (see locomo10.json for the shape)"
            )
    return data


def import_bytes(path: Path) -> bytes:
    """The whole of an import file: a regular file of at most MAX_IMPORT_BYTES (a device such
    as /dev/zero, a pipe or a folder would be read forever or not at all)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInputError(f"{path} is not a regular file; give the export file itself")
        if info.st_size > MAX_IMPORT_BYTES:
            raise InvalidInputError(
                f"{path} holds {info.st_size:,} bytes, more than an import reads "
                f"({MAX_IMPORT_BYTES:,}); split it into smaller files"
            )
        return path.read_bytes()
    except OSError as e:
        raise InvalidInputError(f"cannot read {path} ({e.strerror or e})") from None
