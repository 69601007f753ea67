"""Rebuild read models from position 0 into a fresh file, compare with the live one, swap."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.errors import MindError
from mindledger.projections.engine.duckdb_files import checkpoint, close, connect
from mindledger.projections.engine.ports import LedgerReader
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.readmodel import (
    ReadModelPaths,
    projector_lock,
    published_position,
)
from mindledger.projections.engine.schema import TABLES
from mindledger.projections.engine.summary import move_summary


class ReplayTargetExistsError(MindError):
    """Raised when replay is pointed at a file that already exists."""


class ReplayTargetError(MindError):
    """Raised when replay is pointed at a path that DuckDB or the filesystem cannot create."""


def check_target(target: Path) -> None:
    """Raise ReplayTargetError for a path DuckDB cannot open whatever the filesystem allows."""
    text = str(target)
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        raise ReplayTargetError(
            f"{text} is not valid UTF-8, and DuckDB opens only UTF-8 file names; choose a "
            "UTF-8 name"
        )
    if "\\" in text:
        raise ReplayTargetError(
            f"{text} holds a backslash, which DuckDB reads as a folder separator; choose a "
            "name without one"
        )


def unusable_target(target: Path, reason: str) -> ReplayTargetError:
    """The error for a target the filesystem refused, in replay's words."""
    return ReplayTargetError(
        f"cannot create {target} ({reason}); choose a new file in an existing, writable folder"
    )


def rebuild(
    target: Path,
    reader: LedgerReader,
    stop: int | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Project every event up to `stop` into a new DuckDB file; returns events applied."""
    check_target(target)
    try:
        if target.exists():
            raise ReplayTargetExistsError(f"{target} exists; replay writes only into a new file")
        projector = Projector(target, summary=False)
    except OSError as e:  # a name too long, a folder that is a file, no permission
        raise unusable_target(target, e.strerror or str(e)) from None
    except duckdb.IOException as e:  # DuckDB's own open of the file, e.g. no such folder
        reason = str(e).partition(": ")[2].rpartition(": ")[2] or str(e)
        raise unusable_target(target, reason) from None
    try:
        applied = projector.catch_up(reader, stop=stop, on_batch=on_batch, maintain=True)
        checkpoint(projector.con)
        return applied
    finally:
        projector.close()


def differences(live: Path, rebuilt: Path, sample: int = 5) -> list[dict[str, Any]]:
    """Rows that differ between two read models, table by table (empty when identical)."""
    con = connect()
    try:
        for path, alias in ((live, "live"), (rebuilt, "rebuilt")):
            quoted = str(path).replace("'", "''")  # a string literal: quotes doubled
            con.execute(f"ATTACH '{quoted}' AS {alias} (READ_ONLY)")
        found = []
        for table in TABLES:
            if table == "term_counts":
                continue  # bookkeeping of the projector's maintenance, not projected state
            for a, b in (("live", "rebuilt"), ("rebuilt", "live")):
                # Tension is as of the projector's last refresh: derived from time, not compared;
                # so is how much of the term index is unsorted.
                cols = {
                    "threads": "* EXCLUDE (tension, tension_as_of)",
                    "tracking": "* EXCLUDE (unsorted)",
                }.get(table, "*")
                q = f"SELECT {cols} FROM {a}.{table} EXCEPT ALL SELECT {cols} FROM {b}.{table}"
                count = con.execute(f"SELECT count(*) FROM ({q})").fetchone()
                if count and count[0]:
                    rows = con.execute(f"{q} LIMIT {sample}").fetchall()
                    found.append(
                        {
                            "table": table,
                            "only_in": a,
                            "rows": count[0],
                            "sample": [list(map(str, r)) for r in rows],
                        }
                    )
        return found
    finally:
        close(con)


def swap_in(paths: ReadModelPaths, rebuilt: Path) -> None:
    """Make a rebuilt file the live read model, under the projector lock."""
    with projector_lock(paths.lock, wait=True):
        # The old file's WAL belongs to the old file: replayed onto the new one, it would
        # corrupt it.
        Path(f"{paths.working}.wal").unlink(missing_ok=True)
        os.replace(rebuilt, paths.working)
        move_summary(rebuilt, paths.working)
        projector = Projector(paths.working)
        try:
            projector.publish(paths.published)
        finally:
            projector.close()


def live_position(paths: ReadModelPaths) -> int:
    """The position of what readers currently see."""
    return published_position(paths.published)
