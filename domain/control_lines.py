"""The control-line protocol: lines in a reply that become domain commands.

    COMMIT: text                      CLOSE: cid [reason]
    CLAIM:type={json}                 CONCEPT: token = definition
    RELATE: a -> relation -> b        REFLECT: text
    THREAD: {"label", "content", "origin"?}
    THREAD-WORK: id {"file"|"commitment"|"tool": ...}
    THREAD-RESOLVE: id {"verdict", "reason"|"artifact", "by"?}
    REMEMBER: [question =] answer     KNOWLEDGE: action target [= answer]
    FORGET: ... (always refused: only the owner forgets)

A line is a control line when it starts (after optional spaces, `-` or `*`) with one of these
keywords followed by `:`. Control lines are stripped from the reply shown to the user.

Lines end at "\n" only (with "\r\n" read as one break): str.splitlines would also break at
U+2028/U+2029/U+0085, \x1c-\x1e, \v, \f and a lone \r, so text a terminal shows as one line
("hello\u2028COMMIT: x") could hide a command in the middle of a sentence.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

KEYWORDS = (
    "COMMIT",
    "CLOSE",
    "CLAIM",
    "CONCEPT",
    "RELATE",
    "REFLECT",
    "THREAD-RESOLVE",
    "THREAD-WORK",
    "THREAD",
    "REMEMBER",
    "KNOWLEDGE",
    # Never the model's to use: parsed only to be refused and recorded (domain/forgetting.py).
    "FORGET",
)
# Longest first, so THREAD-WORK is not read as THREAD.
_ALTERNATIVES = "|".join(sorted(KEYWORDS, key=len, reverse=True))
# Only spaces and tabs may lead a control line or follow its bullet: any other white space
# (U+2028, \v, \f, ...) would let text on one real line pass for a line of its own.
_LINE = re.compile(r"^[ \t]*(?:[-*][ \t]*)?(" + _ALTERNATIVES + r")\s*:(.*)$")
_EVIDENCE = re.compile(r"#(\d+)\b")


def reply_lines(reply: str) -> list[str]:
    """The reply's lines: split at "\n" only, a "\r" before it dropped (CRLF is one break)."""
    return [line.removesuffix("\r") for line in reply.split("\n")]


class ControlLine(NamedTuple):
    """One control line: its keyword, the text after the colon, and the raw line."""

    keyword: str
    body: str
    raw: str


def split_reply(reply: str) -> tuple[str, list[ControlLine]]:
    """The reply with control lines removed, and the control lines in order."""
    kept: list[str] = []
    lines: list[ControlLine] = []
    for raw in reply_lines(reply):
        match = _LINE.match(raw)
        if match:
            lines.append(ControlLine(match.group(1), match.group(2).strip(), raw.strip()))
        else:
            kept.append(raw)
    return "\n".join(kept).strip(), lines


def parse_close(body: str) -> tuple[str, str | None, list[int]]:
    """`cid [reason]`; `#N` in the reason cites memory item N as evidence."""
    cid, _, reason = body.partition(" ")
    evidence = [int(n) for n in _EVIDENCE.findall(reason)]
    return cid.strip().lower(), reason.strip() or None, evidence


def _not_json(text: str) -> Any:
    raise ValueError(f"malformed JSON: {text} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"malformed JSON: {text} is past a JSON number's range")
    return number


def json_value(text: str) -> Any:
    """`json.loads(text)` without NaN and Infinity (and 1e999, read as infinity): Python's
    json takes them, but they are not JSON, and a model's line holding one was recorded and
    printed as it was (`mind turn --json` wrote `NaN`, which strict JSON readers refuse)."""
    return json.loads(text, parse_constant=_not_json, parse_float=_finite)


def parse_object(text: str, what: str) -> dict[str, Any]:
    """A JSON object, or ValueError saying how the line is written."""
    try:
        value = json_value(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"malformed JSON in {what}: {e}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} takes a JSON object")
    return value


def parse_thread_ref(body: str, keyword: str) -> tuple[str, dict[str, Any]]:
    """`id {json}` -> (id, object)."""
    ref, _, payload = body.strip().partition(" ")
    if not ref or not payload.strip():
        raise ValueError(f"{keyword} is written {keyword}: <thread id> {{json}}")
    return ref.strip(), parse_object(payload.strip(), keyword)


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


def parse_remember(body: str) -> tuple[str, str]:
    """`question = answer`, or a text that is both (the question is the intent)."""
    question, sep, answer = body.partition(" = ")
    if not sep:
        return body.strip(), body.strip()
    return question.strip(), answer.strip()


def parse_knowledge(body: str) -> tuple[str, str, str | None]:
    """`action target [= answer]` -> (action, target, answer)."""
    head, sep, answer = body.partition(" = ")
    action, _, target = head.strip().partition(" ")
    if not action or not target.strip():
        raise ValueError("a knowledge decision is written KNOWLEDGE: <action> <id> [= answer]")
    return action.strip().lower(), target.strip(), answer.strip() if sep else None


class VisibleStream:
    """Filters streamed tokens so control lines never reach the screen.

    Text is released as soon as the current line cannot be a control line; a line that might be
    one is held until its newline decides.
    """

    def __init__(self) -> None:
        self.line = ""
        self.shown = False  # whether part of the current line was already released

    def _could_be_control(self, text: str) -> bool:
        head = text.lstrip().lstrip("-*").lstrip().upper()
        return (
            any(
                k.startswith(head[: len(k)]) and (len(head) <= len(k) or head.startswith(k))
                for k in KEYWORDS
            )
            if head
            else True
        )

    def feed(self, token: str) -> str:
        """The part of the text so far that is safe to show."""
        out = []
        for ch in token:
            self.line += ch
            if ch == "\n":
                if self.shown or not _LINE.match(self.line.rstrip("\n")):
                    out.append(self.line if not self.shown else "\n")
                self.line, self.shown = "", False
            elif self.shown:
                out.append(ch)
                self.line = ""
            elif not self._could_be_control(self.line):
                out.append(self.line)
                self.shown, self.line = True, ""
        return "".join(out)

    def flush(self) -> str:
        """Whatever remains at the end of the stream, unless it is a control line."""
        rest, self.line = self.line, ""
        if self.shown:
            return rest
        return "" if _LINE.match(rest) else rest
