"""Canonical JSON, the spelling the hash chain hashes: one byte string per value. Kept apart
from the mapper (adapters/pydantic_mapping.py) so an export's integrity check loads it without
the event-sourcing library or the cipher."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import orjson

# Written into a payload only when a class is past schema 1, like the library's `class_version`.
SCHEMA_KEY = "_schema"

# `json.dumps` with these options builds a new encoder on every call (a third of its time
# for an event's small state); one built once encodes the same bytes.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_base64(text: object) -> bytes | None:
    """The bytes `text` spells in canonical base64 (the one spelling that encodes them back,
    as the exporter writes keys and states), else None."""
    if text.__class__ is not str:
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data if base64.b64encode(data).decode() == text else None


def canonical_json(value: Any) -> bytes:
    """One byte string per value: sorted keys, no spaces, UTF-8 (the hash chain hashes these)."""
    return _CANONICAL.encode(value).encode()


_SORTED = orjson.OPT_SORT_KEYS
# orjson spells every float with a fraction or a signed exponent (1.5, 1e+16, 5e-324).
_FLOAT_MARKS = (b".", b"e+", b"e-")
_DIGITS = frozenset(b"0123456789")
_NUMBER = frozenset(b"0123456789eE+-.")


def has_float(line: bytes) -> bool:
    """Whether `line`, were it orjson's spelling of a value, could hold a float: a number with
    a fraction or an exponent where a value starts (after `:`, `,` or `[`) and ends (before
    `,`, `}` or `]`). The same bytes inside a string (a sentence's "1.5,") only send a line
    the slow way; a time's "09:00:00.5+00:00" does not (no value ends there). Looked for
    from its marks, found at C speed: a regular expression over the line took 3x its parse."""
    for mark in _FLOAT_MARKS:
        at = line.find(mark)
        while at != -1:
            if _number_at(line, at):
                return True
            at = line.find(mark, at + 1)
    return False


def _number_at(line: bytes, at: int) -> bool:
    start = at
    while start > 0 and line[start - 1] in _DIGITS:
        start -= 1
    if start == at:
        return False
    if start > 0 and line[start - 1] == 0x2D:  # -
        start -= 1
    if start == 0 or line[start - 1] not in b":,[":
        return False
    end = at + 1
    while end < len(line) and line[end] in _NUMBER:
        end += 1
    return end < len(line) and line[end] in b",}]"


def fast_canonical(value: Any, floatless: bool) -> bytes | None:
    """`canonical_json(value)` by orjson (a fifth of its time), or None where the two could
    differ: orjson spells some floats otherwise (0.00001 for 1e-05), so `floatless` says that
    `value` holds no float; it refuses integers past 64 bits, lone surrogates and deep
    nesting. For every other value the bytes are the same (tests/unit/test_fast_canonical.py).
    """
    if not floatless:
        return None
    try:
        return orjson.dumps(value, option=_SORTED)
    except (TypeError, orjson.JSONEncodeError):
        return None


def is_canonical(value: Any, line: bytes) -> tuple[bool, bool]:
    """Whether `line` is `canonical_json(value)`, `value` being what `line` parses to, and
    whether orjson spelled it so (then `fast_canonical` may encode what `value` holds)."""
    fast = fast_canonical(value, not has_float(line))
    if fast is not None and fast == line:
        return True, True
    try:  # the rule itself decides every other line (a float, NaN, a big integer, an edit)
        return canonical_json(value) == line, False
    except (ValueError, RecursionError):
        return False, False
