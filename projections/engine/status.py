"""What `mind status` says about the read models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.errors import MindError
from mindledger.projections.engine.duckdb_files import close, connect
from mindledger.projections.engine.readmodel import ReadModelPaths, projector_lock, read_position


class ReadModelUnreadableError(MindError):
    """Raised when the published read model cannot be opened or holds no events table."""


def projection_status(paths: ReadModelPaths, head: int) -> list[dict[str, Any]]:
    """Each projection's position and lag behind the ledger head (as readers see it)."""
    position = read_position(paths)
    return [{"name": "main", "position": position, "lag": max(head - position, 0)}]


def read_model_head(paths: ReadModelPaths) -> tuple[int, str] | None:
    """The last ledger position and hash the read model holds (None when it holds none): a
    second anchor of the ledger's head, kept by the projector. Reads the working file when no
    projector holds it (or the lock cannot be taken, as in a read-only home), else the published
    copy."""
    try:
        with projector_lock(paths.lock, wait=False) as held:
            if held and paths.working.exists():
                return _last_event(paths.working)
    except OSError:
        # No lock to be had: a read-only home, where no projector can be writing either.
        return _last_event(paths.working if paths.working.exists() else paths.published)
    return _last_event(paths.published)


def _last_event(path: Path) -> tuple[int, str] | None:
    if not path.exists():
        return None
    try:
        con = connect(path, read_only=True)
        try:
            row = con.execute("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1")
            found = row.fetchone()
        finally:
            close(con)
    except duckdb.Error as e:
        raise ReadModelUnreadableError(f"{path} cannot be read ({_one_line(e)})") from None
    return (int(found[0]), str(found[1])) if found and found[1] is not None else None


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())
