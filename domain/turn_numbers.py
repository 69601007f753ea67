"""Turn numbers and unfinished turns, from the ledger (never from a read model).

One stream gives the numbers. Only its last event is ever read (one indexed query: the stream
is never replayed, so its length costs nothing), and the next number is given in the
transaction that saves the turn's message. Two processes that read the same last number both
write the stream's next version; the second gets IntegrityError and numbers again, so no two
turns share a number and "ratify on a later turn" means what it says.

Each number also records the turns that had a message and no outcome when it was given. The
next turn checks those (one query each) and the turn numbered last, so finding unfinished
turns costs what there is to find, not what the ledger holds.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from mindledger.domain.changes import Changes
from mindledger.domain.events import AggregateRoot, DomainEvent, stream_id
from mindledger.domain.turn import Turn

TURN_NUMBERS_ID = stream_id("turn-numbers")
_OUTCOMES = (
    Turn.GenerationFailed.TOPIC,
    Turn.Completed.TOPIC,
    Turn.Interrupted.TOPIC,
)
# The last events of a turn still running: its message, or a retry's attempt.
_RUNNING = frozenset({Turn.Started.TOPIC, Turn.Retried.TOPIC})


class TurnNumbers(AggregateRoot):
    """The numbering of turns, as of its last event."""

    class Given(DomainEvent):
        TOPIC = "mind.turn_numbers.given"
        seq: int
        turn_id: str
        unfinished: list[str]  # turns with a message and no outcome when `seq` was given

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.seq = 0
        self.turn_id: str | None = None
        self.unfinished: list[str] = []

    @classmethod
    def resume(cls, last: Given) -> TurnNumbers:
        """The numbering as its last event left it (at that event's version)."""
        numbers = cls(last.originator_id)
        numbers.apply(last)
        return numbers

    def give(self, turn_id: UUID, unfinished: list[str], at: datetime) -> int:
        """Give the next number to a turn; `unfinished`: the turns still without an outcome."""
        self.trigger(self.Given, at, seq=self.seq + 1, turn_id=turn_id.hex, unfinished=unfinished)
        return self.seq

    def candidates(self) -> list[str]:
        """Turns that may still have no outcome: those recorded as unfinished, and the last."""
        return [*self.unfinished, *([self.turn_id] if self.turn_id else [])]

    def when_Given(self, e: Given) -> None:
        self.seq, self.turn_id, self.unfinished = e.seq, e.turn_id, list(e.unfinished)


def turn_numbers(changes: Changes) -> TurnNumbers:
    """The numbering as it stands in the ledger (not added to `changes`)."""
    last = changes.last_event(TURN_NUMBERS_ID)
    if isinstance(last, TurnNumbers.Given):
        return TurnNumbers.resume(last)
    return _from_turns(changes)


def _from_turns(changes: Changes) -> TurnNumbers:
    """The numbering of a ledger written before turns were numbered here: the highest number
    its turns took, and those of them left without an outcome (read once: the first number
    given ends it)."""
    numbers = TurnNumbers(TURN_NUMBERS_ID)
    started: dict[str, None] = {}
    for event in changes.scan((Turn.Started.TOPIC, *_OUTCOMES)):
        if isinstance(event, Turn.Started):
            numbers.seq = max(numbers.seq, event.seq)
            started[event.originator_id.hex] = None
        else:
            started.pop(event.originator_id.hex, None)
    numbers.unfinished = list(started)
    return numbers


def unfinished_turns(changes: Changes, numbers: TurnNumbers) -> list[Turn.Started | Turn.Retried]:
    """The candidates that still have no outcome (one query each): each one's last event, its
    message or a retry's attempt (both name the process running it)."""
    found: list[Turn.Started | Turn.Retried] = []
    for candidate in numbers.candidates():
        last = changes.last_event(UUID(candidate), _RUNNING)  # an outcome is not decoded
        if isinstance(last, Turn.Started | Turn.Retried):
            found.append(last)
    return found
