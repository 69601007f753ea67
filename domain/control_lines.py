"""The control-line protocol: lines in a reply that become domain commands.

    COMMIT: text                      CLOSE: cid [reason]
    CLAIM:type={json}                 CONCEPT: token = definition
    RELATE: a -> relation -> b        REFLECT: text

A line is a control line when it starts (after optional spaces, `-` or `*`) with one of these
keywords followed by `:`. Control lines are stripped from the reply shown to the user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KEYWORDS = ("COMMIT", "CLOSE", "CLAIM", "CONCEPT", "RELATE", "REFLECT")
_LINE = re.compile(r"^\s*(?:[-*]\s*)?(" + "|".join(KEYWORDS) + r")\s*:(.*)$")


@dataclass(frozen=True)
class ControlLine:
    """One control line: its keyword, the text after the colon, and the raw line."""

    keyword: str
    body: str
    raw: str


def split_reply(reply: str) -> tuple[str, list[ControlLine]]:
    """The reply with control lines removed, and the control lines in order."""
    kept: list[str] = []
    lines: list[ControlLine] = []
    for raw in reply.splitlines():
        match = _LINE.match(raw)
        if match:
            lines.append(ControlLine(match.group(1), match.group(2).strip(), raw.strip()))
        else:
            kept.append(raw)
    return "\n".join(kept).strip(), lines


def parse_close(body: str) -> tuple[str, str | None]:
    """`cid [reason]`."""
    cid, _, reason = body.partition(" ")
    return cid.strip().lower(), reason.strip() or None


def parse_claim(body: str) -> tuple[str, str]:
    """`type={json}` -> (type, json text)."""
    claim_type, sep, payload = body.partition("=")
    if not sep:
        raise ValueError("a claim is written CLAIM:type={json}")
    return claim_type.strip(), payload.strip()


def parse_concept(body: str) -> tuple[str, str]:
    """`token = definition`."""
    token, sep, definition = body.partition("=")
    if not sep:
        raise ValueError("a concept is written CONCEPT: token = definition")
    return token.strip(), definition.strip()


def parse_relate(body: str) -> tuple[str, str, str]:
    """`a -> relation -> b`."""
    parts = [p.strip() for p in body.split("->")]
    if len(parts) != 3 or not all(parts):
        raise ValueError("a relation is written RELATE: a -> relation -> b")
    return parts[0], parts[1], parts[2]
