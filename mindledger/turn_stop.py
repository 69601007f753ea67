"""A stop with turns in flight: the process that runs them records them as interrupted before
it exits, so no turn stays `started` until some later turn on the ledger finds it. A turn that
failed after its message was recorded (the disk filled before its reply was saved:
`domain.turn_kept`) is recorded interrupted the same way by the floor that ran it
(`KeptTurns`): at once, else before its next turn, so a server that lives on does not leave it
`started` (a process that ends leaves it to the next turn's recovery, as before).

The turn still running holds the mind's write lock (it waits on its model inside it), so this
writes through a ledger connection of its own, as another process would: when the turn reaches
its outcome first, the interrupt finds it finished and records nothing; when the interrupt is
first, the turn's own save meets a finished turn and records nothing more. The ledger's
per-stream version check decides which came first.
"""

from __future__ import annotations

import os
import socket
from uuid import UUID

from mindledger.compose import Home, open_mind
from mindledger.domain.changes import Changes
from mindledger.domain.turn import Turn, TurnFinishedError
from mindledger.domain.turn_kept import kept_turn
from mindledger.domain.turn_numbers import turn_numbers, unfinished_turns


def interrupt_own_turns(home: Home, reason: str) -> list[str]:
    """Record as interrupted the turns this process started on `home`'s ledger that have no
    outcome yet; their ids (turns of other processes are theirs to finish)."""
    pid, host = os.getpid(), socket.gethostname()
    mind = open_mind(home)
    try:
        unfinished = mind.decide(lambda changes: unfinished_turns(changes, turn_numbers(changes)))
        marked = []
        for started in unfinished:
            if started.pid != pid or started.host != host:
                continue

            def interrupt(changes: Changes, stream: UUID = started.originator_id) -> None:
                changes.load(Turn, stream).interrupt(reason, mind.clock())

            try:
                mind.decide(interrupt)
            except TurnFinishedError:
                continue  # its outcome was recorded meanwhile
            marked.append(started.originator_id.hex)
        return marked
    finally:
        mind.close()


# Why a kept turn ended, as its `Turn.Interrupted` says (the failure's words, capped, cleaned
# and redacted, go in the second form: the ledger keeps them).
NO_ROOM = "there was no space left to record its outcome; its message is kept"
FAILED = "it failed before its outcome was recorded ({cause}); its message is kept"


class KeptTurns:
    """The turns a floor's failed turns kept unanswered, until each is recorded interrupted
    (once: a turn finished meanwhile counts as settled). Callers hold the floor's write lock."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.unsettled: dict[UUID, str] = {}

    def failed(self, e: BaseException) -> None:
        """Note the turn `e` kept (if it kept one) and record it interrupted now if the ledger
        takes the write. An interrupt (Ctrl-C) or an exit is left to the next turn's recovery:
        the process is going."""
        from mindledger.domain.errors import cause_line
        from mindledger.error_report import causes, clean_text, was_disk_full
        from mindledger.safe_text import configured_secrets

        kept = kept_turn(causes(e)) if isinstance(e, Exception) else None
        if kept is None:
            return
        cause = clean_text(cause_line(e), configured_secrets(self.home.path))
        reason = NO_ROOM if was_disk_full(e, self.home.path) else FAILED.format(cause=cause)
        self.unsettled[UUID(kept)] = reason
        self.settle()

    def settle(self) -> list[str]:
        """Record the kept turns interrupted; the ids recorded (or found finished). One the
        ledger refuses (the disk still full) stays for the next call."""
        settled = []
        for turn_id, reason in list(self.unsettled.items()):
            try:
                _interrupt(self.home, turn_id, reason)
            except Exception:  # no room yet, say: the failure was reported; tried again later
                break
            del self.unsettled[turn_id]
            settled.append(turn_id.hex)
        return settled


def _interrupt(home: Home, turn_id: UUID, reason: str) -> None:
    mind = open_mind(home)
    try:
        mind.decide(lambda changes: changes.load(Turn, turn_id).interrupt(reason, mind.clock()))
    except TurnFinishedError:
        pass  # its outcome was recorded meanwhile (another process's recovery, a stop)
    finally:
        mind.close()
