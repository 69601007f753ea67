"""Validation of the free text that users and models put into events."""

from __future__ import annotations

import re
import unicodedata

from mindledger.domain.errors import InvalidInputError

# What a sealed text field reads as once its key is destroyed (lists and objects read empty).
FORGOTTEN = "[forgotten]"
# Set in a read event's state (by the adapters) when its own key is gone: the fields named in
# SEALED with scope "own" hold placeholders, so nothing indexes or quotes them.
FORGOTTEN_MARK = "_forgotten"

# Newline and tab are content; every other control character is almost always a paste accident
# or an injection attempt, and would make listings and logs lie about what is stored.
_ALLOWED_CONTROLS = {"\n", "\t"}

# What a reader cannot see: control characters (C0, DEL, C1), line and paragraph separators,
# and every format character (Unicode category Cf: direction overrides and isolates, zero-width
# spaces, the byte-order mark, tag characters) except the zero-width joiner and non-joiner, which
# emoji and several scripts need. Written out because building it from `unicodedata` at import
# scans 1.1M code points (tests/unit/test_text_hidden.py checks it against `unicodedata`).
_BEYOND_C0 = (
    "\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
)
HIDDEN = re.compile(f"[\x00-\x1f{_BEYOND_C0}]")
# What a JSON document may hold unescaped of `HIDDEN`: JSON escapes every C0 control in a
# string, and a newline outside one is its indentation.
HIDDEN_BEYOND_C0 = re.compile(f"[{_BEYOND_C0}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def show_hidden(text: str, keep: str = "") -> str:
    """`text` with every hidden character (`HIDDEN`) but those in `keep` written out visibly as
    an escape (`\\n`, `\\x1b`, `\\u202e`): what a terminal or a prompt shows is then what is
    there, and no stored text can move the cursor, retitle a window or start a new line."""
    # isprintable (C code) is true only of text without any Cc, Cf, Zl, Zp (or unassigned)
    # character: most texts, which then skip the slower regex.
    if text.isprintable() or HIDDEN.search(text) is None:
        return text
    return HIDDEN.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


def refuse_hidden(value: str, field: str) -> None:
    """Raise InvalidInputError naming the first hidden character of `value` (tab and newline
    aside, which `clean_text` rules on) and its position: names and commitments are shown in
    listings, where a direction override or a zero-width space would make them lie."""
    for position, ch in enumerate(value, 1):
        if ch not in _ALLOWED_CONTROLS and HIDDEN.match(ch):
            name = unicodedata.name(ch, "unnamed")
            raise InvalidInputError(
                f"{field} contains the invisible character U+{ord(ch):04X} ({name}) at position "
                f"{position}; remove it"
            )


def clean_text(
    value: str, field: str, max_chars: int, *, single_line: bool = False, visible: bool = False
) -> str:
    """Return `value` stripped, or raise InvalidInputError saying what to fix (`visible`: also
    refuse invisible and direction-changing characters, `refuse_hidden`)."""
    # isprintable (C code) is true only of text without a control, format, separator or
    # surrogate character, so none of the per-character checks below can refuse it: most
    # texts skip them (they were a tenth of an append's time).
    printable = value.isprintable()
    if not printable and any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise InvalidInputError(f"{field} is not valid UTF-8; re-encode the input as UTF-8")
    value = value.replace("\r\n", "\n").strip()
    if not value:
        raise InvalidInputError(f"{field} is empty; give some text")
    if len(value) > max_chars:
        raise InvalidInputError(
            f"{field} is {len(value):,} characters; the limit is {max_chars:,} (shorten it)"
        )
    if printable:
        return value
    for ch in value:
        if unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS:
            raise InvalidInputError(
                f"{field} contains control character U+{ord(ch):04X}; remove it"
            )
        if single_line and ch == "\n":
            raise InvalidInputError(f"{field} must be a single line")
    if visible:
        refuse_hidden(value, field)
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


def normalise_intent(question: str) -> str:
    """The form two questions share when they ask the same thing: trimmed, whitespace
    collapsed, lower-cased (a knowledge item's intent; here, not in `knowledge.py`, so that
    recall's knowledge channel reads it without the event classes)."""
    return " ".join(question.split()).lower()
