"""Validation of the free text that users and models put into events."""

from __future__ import annotations

import re
import unicodedata

from domain.errors import InvalidInputError

# Newline and tab are content; every other control character is almost always a paste accident
# or an injection attempt, and would make listings and logs lie about what is stored.
_ALLOWED_CONTROLS = {"\n", "\t"}


def clean_text(value: str, field: str, max_chars: int, *, single_line: bool = False) -> str:
    """Return `value` stripped, or raise InvalidInputError saying what to fix."""
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise InvalidInputError(f"{field} is not valid UTF-8; re-encode the input as UTF-8")
    value = value.replace("\r\n", "\n").strip()
    if not value:
        raise InvalidInputError(f"{field} is empty; give some text")
    if len(value) > max_chars:
        raise InvalidInputError(
            f"{field} is {len(value):,} characters; the limit is {max_chars:,} (shorten it)"
        )
    for ch in value:
        if unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS:
            raise InvalidInputError(
                f"{field} contains control character U+{ord(ch):04X}; remove it"
            )
        if single_line and ch == "\n":
            raise InvalidInputError(f"{field} must be a single line")
    return value


_TOKEN = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")


def clean_token(value: str, field: str = "concept token") -> str:
    """Return a normalised concept token like `user.identity`, or raise InvalidInputError."""
    token = value.strip().lower()
    if not _TOKEN.match(token) or len(token) > 100:
        raise InvalidInputError(
            f"{field} {value!r} is not valid; use lowercase dotted words like 'project.alpha'"
        )
    return token
