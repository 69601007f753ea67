"""A stop with turns in flight: the process that runs them records them as interrupted before
it exits, so no turn stays `started` until some later turn on the ledger finds it.

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
