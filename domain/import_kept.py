"""An import that fails part of the way through (the disk filled, the process's file size
limit was reached) keeps the batches it saved before, by design: each batch is a transaction,
and running the same import again adds only what is still missing. The error carries how much
was kept, as a note on the exception (its type unchanged, so every front-end maps it as
before), for the one line that says so (`mindledger.error_report`) and for the traceback in
the home's log. Each level that saved something adds its count: a conversation's batches
(`Mind.import_conversation`), a foreign file's (`foreign_apply.import_records`), the
conversations an import finished before the one that failed (`noting_kept`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

NOTE = "kept by this import before it stopped: "
MESSAGES = "message"
RECORDS = "record"


def note_import_kept(e: BaseException, count: int, unit: str) -> None:
    """Note on `e` that `count` more `unit`s were saved by the import it stopped (one note per
    unit, its count the sum of every level's)."""
    if count <= 0:
        return
    notes: list[str] = getattr(e, "__notes__", [])
    for i, note in enumerate(notes):
        counted = _counted(note)
        if counted is not None and counted[1] == unit:
            notes[i] = _note(counted[0] + count, unit)
            return
    e.add_note(_note(count, unit))


@contextmanager
def noting_kept(count: int, unit: str) -> Iterator[None]:
    """On an exception from the block, note that `count` `unit`s were saved before it (the
    conversations an import finished before the one it stopped in)."""
    try:
        yield
    except BaseException as e:  # re-raised: only noted
        note_import_kept(e, count, unit)
        raise


def import_kept(chain: Iterable[BaseException]) -> str | None:
    """What the import an error of `chain` stopped had kept ("1000 messages"), if anything."""
    for e in chain:
        for note in getattr(e, "__notes__", ()):
            if isinstance(note, str) and _counted(note) is not None:
                return note.removeprefix(NOTE)
    return None


def _note(count: int, unit: str) -> str:
    return f"{NOTE}{count} {unit}{'' if count == 1 else 's'}"


def _counted(note: object) -> tuple[int, str] | None:
    """(count, unit) of a note `_note` wrote; None for any other note."""
    if not isinstance(note, str) or not note.startswith(NOTE):
        return None
    count, _, unit = note.removeprefix(NOTE).partition(" ")
    if not count.isdigit():
        return None
    return int(count), unit.removesuffix("s")
