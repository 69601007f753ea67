"""A turn that fails after its message was recorded (the disk filled while its reply was
saved, the read model broke under it): the message stays in the ledger, unanswered (the floor
that ran it records the turn interrupted once the ledger takes the write; a process that ends
first leaves that to the next turn's recovery), and the error carries which turn keeps it, as
a note on the exception (its type unchanged, so every front-end maps it as before), for the
one line that says so (`mindledger.error_report`) and for the traceback in the home's log."""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

NOTE = "the message is kept as turn "


def note_kept(e: BaseException, turn_id: UUID) -> None:
    """Note on `e` that turn `turn_id` keeps the message (once)."""
    note = f"{NOTE}{turn_id.hex}"
    if note not in getattr(e, "__notes__", ()):
        e.add_note(note)


def kept_turn(chain: Iterable[BaseException]) -> str | None:
    """The id of the turn that keeps the message, noted on an error of `chain`, if any."""
    for e in chain:
        for note in getattr(e, "__notes__", ()):
            if isinstance(note, str) and note.startswith(NOTE):
                return note.removeprefix(NOTE)
    return None
