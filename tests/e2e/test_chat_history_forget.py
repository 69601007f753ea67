"""`mind chat` on a terminal keeps its lines in `chat_history` as they are typed, so a forget run
while the chat is open stays done when the chat ends (the history was rewritten from memory)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

from tests.e2e.server_processes import MIND, client_env, init_mind, run_mind

SECRET = "my Zqxchatline secret"
WAIT_S = 120


class Terminal:
    """A `mind chat` process on a pseudo-terminal, read until what a test waits for appears."""

    def __init__(self, home: Path) -> None:
        self.fd, child = pty.openpty()
        env = client_env(home, MIND_NO_SERVER="1", TERM="dumb")
        args = [*MIND, "chat", "--model", "mock", "--mock-reply", "Noted.", "--no-server"]
        self.process = subprocess.Popen(args, stdin=child, stdout=child, stderr=child, env=env)
        os.close(child)
        self.seen = b""

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    def wait_for(self, text: str, times: int = 1) -> None:
        deadline = time.monotonic() + WAIT_S
        while self.seen.count(text.encode()) < times:
            left = deadline - time.monotonic()
            assert left > 0, f"waited for {text!r}; the terminal shows {self.seen[-500:]!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.fd, 4096)
                except OSError:  # the chat ended and closed its side
                    break

    def close(self) -> int:
        code = self.process.wait(timeout=WAIT_S)
        os.close(self.fd)
        return code


def test_a_line_forgotten_while_the_chat_is_open_is_not_written_back(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    init_mind(home)
    chat = Terminal(home)
    chat.wait_for("you> ")
    chat.type(SECRET)
    chat.wait_for("Noted.")
    chat.type("water the ferns")
    chat.wait_for("Noted.", times=2)
    assert SECRET in (home / "chat_history").read_text()
    turns = run_mind(["log", "--json", "--limit", "100"], client_env(home, MIND_NO_SERVER="1"))
    first = next(
        e["aggregate"]
        for e in turns.json()
        if e["type"] == "mind.turn.started" and e["payload"]["text"] == SECRET
    )

    forgot = run_mind(["forget", "--turn", first, "--yes"], client_env(home, MIND_NO_SERVER="1"))
    chat.type("/exit")

    assert forgot.code == 0, forgot.err
    assert chat.close() == 0
    history = (home / "chat_history").read_text()
    assert SECRET not in history
    assert "water the ferns" in history
