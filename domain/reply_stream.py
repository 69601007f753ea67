"""A reply's visible text as it streams: control lines never shown, and the pieces released add
up to exactly the visible reply the turn records (`split_reply` of the stored reply)."""

from __future__ import annotations

from collections.abc import Callable

from mindledger.domain.control_lines import KEYWORDS, split_reply


def could_be_control(line: str) -> bool:
    """Whether some continuation of this unfinished line could still be a control line (a
    conservative answer: True holds the line back until its end decides)."""
    head = line.lstrip()
    if head[:1] in ("-", "*"):
        head = head[1:].lstrip()
    if not head:
        return True
    for keyword in KEYWORDS:
        if keyword.startswith(head):
            return True
        if head.startswith(keyword):
            rest = head[len(keyword) :].lstrip()
            if not rest or rest.startswith(":"):
                return True
    return False


class ReplyStream:
    """Feeds raw model text in; hands the visible reply's new text to `emit` as soon as it is
    known to be shown. A line that might be a control line is held until its newline decides;
    leading and trailing whitespace is held too (the recorded reply is stripped), and nothing
    past `limit` characters of raw text counts (the turn keeps only that much)."""

    def __init__(self, emit: Callable[[str], None], limit: int) -> None:
        self.emit: Callable[[str], None] | None = emit
        self.limit = limit
        self.fed = 0  # raw characters taken so far
        self.line = ""  # the current line, while it is held
        self.released = False  # whether the current line is being shown as it comes
        self.carriage = False  # a "\r" at the end of a released line, held until the next char
        self.kept_any = False  # whether a line of the visible reply has begun (joins with "\n")
        self.started = False  # whether a non-space character was shown (leading spaces drop)
        self.spaces = ""  # whitespace shown only once something visible follows it

    def feed(self, token: str) -> None:
        """Take the next piece of raw model text."""
        room = self.limit - self.fed
        token = token[: max(room, 0)]
        self.fed += len(token)
        out: list[str] = []
        for ch in token:
            self._take(ch, out)
        self._send(out)

    def finish(self, text: str) -> None:
        """The reply ended as `text`: take what was not streamed (a model that answered in one
        piece), then release the last line unless it is a control line."""
        self.feed(text[self.fed :])
        out: list[str] = []
        if not self.released and not split_reply(self.line.removesuffix("\r"))[1]:
            self._visible(self._line_start() + self.line, out)
        self.line, self.released, self.carriage = "", False, False
        self._send(out)

    def _take(self, ch: str, out: list[str]) -> None:
        if ch == "\n":
            if not self.released:
                text = self.line.removesuffix("\r")
                if not split_reply(text)[1]:
                    self._visible(self._line_start() + text, out)
            self.line, self.released, self.carriage = "", False, False
        elif self.released:
            if self.carriage:
                self._visible("\r", out)
            self.carriage = ch == "\r"
            if not self.carriage:
                self._visible(ch, out)
        else:
            self.line += ch
            if not could_be_control(self.line):
                text, self.line, self.released = self.line, "", True
                self.carriage = text.endswith("\r")
                self._visible(self._line_start() + text.removesuffix("\r"), out)

    def _line_start(self) -> str:
        """The separator before a kept line: lines of the visible reply join with "\n"."""
        joined = "\n" if self.kept_any else ""
        self.kept_any = True
        return joined

    def _visible(self, text: str, out: list[str]) -> None:
        for ch in text:
            if ch.isspace():
                if self.started:
                    self.spaces += ch
            else:
                out.append(self.spaces + ch)
                self.spaces, self.started = "", True

    def _send(self, out: list[str]) -> None:
        if out and self.emit is not None:
            try:
                self.emit("".join(out))
            except Exception:  # a listener that fails (a client gone) stops hearing the reply;
                self.emit = None  # the turn itself goes on and is recorded whole
