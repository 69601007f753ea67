"""Reading a home this process cannot write (a read-only mount, another user's folder).

The projector's working file cannot be opened for writing there, so readers use whichever
read-model file already includes the ledger head, read-only; when none does, they catch up a
copy in a temporary folder, which is removed afterwards. Nothing in the home is changed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.errors import MindError
from mindledger.projections.engine.duckdb_files import close, connect
from mindledger.projections.engine.ports import LedgerReader
from mindledger.projections.engine.projector import Projector, note_reached
from mindledger.projections.engine.schema import schema_version


class HomeNotWritableError(MindError):
    """Raised when a read in a read-only home needs a read model it cannot build anywhere."""


def writable(folder: Path, *files: Path) -> bool:
    """Whether this process can create files in `folder` and write the existing `files`.

    Tried, not looked up: permission bits say nothing about root, read-only mounts or
    immutable files. Opening for writing without O_TRUNC changes nothing."""
    try:
        for path in files:
            if path.exists():
                os.close(os.open(path, os.O_WRONLY))
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return False
    return True


def require_writable(folder: Path, *files: Path, doing: str) -> None:
    """Raise HomeNotWritableError, saying what needed it, when `folder` cannot be written."""
    if not writable(folder, *files):
        raise HomeNotWritableError(
            f"cannot {doing}: this process cannot write {folder} (a read-only home); reading "
            "commands still work, catching up in a temporary copy"
        )


def position_of(path: Path) -> int | None:
    """The ledger position a read-model file includes; None when it is absent, unreadable or
    built for other tables."""
    if not path.exists():
        return None
    try:
        con = connect(path, read_only=True)
    except (OSError, duckdb.Error):
        return None
    try:
        row = con.execute(
            "SELECT (SELECT max(version) FROM schema_version), max(position) FROM tracking"
        ).fetchone()
    except duckdb.Error:
        return None
    finally:
        close(con)
    if row is None or row[0] != schema_version():
        return None
    return int(row[1] or 0)


@contextmanager
def current_copy(working: Path, published: Path, reader: LedgerReader, head: int) -> Iterator[Path]:
    """A read-model file that includes ledger position `head`, made without writing the home:
    the working or published file when one is current, else a caught-up temporary copy."""
    for candidate in (working, published):
        position = position_of(candidate)
        if position is not None and position >= head:
            note_reached(working, position)
            yield candidate
            return
    try:
        scratch = Path(tempfile.mkdtemp(prefix="mind-readmodel-"))
    except OSError as e:
        raise HomeNotWritableError(
            f"the home {working.parent} is read-only and its read model is behind the ledger, "
            f"and there is no temporary folder to catch up in ({e.strerror or e}); "
            "make the home writable, or set TMPDIR to a writable folder"
        ) from None
    try:
        copy = scratch / working.name
        source = next((p for p in (working, published) if position_of(p) is not None), None)
        if source is not None:
            shutil.copyfile(source, copy)
            if Path(f"{source}.wal").exists():
                shutil.copyfile(f"{source}.wal", f"{copy}.wal")
        projector = Projector(copy)
        try:
            projector.catch_up(reader)
            note_reached(working, projector.position())  # the copy's events apply to it too
        finally:
            projector.close()
        yield copy
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
