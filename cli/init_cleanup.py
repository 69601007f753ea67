"""Undoing a failed `mind init`: whatever it created is removed, so the next init starts clean.

Without this, an init that failed after creating the ledger left a genesis row that the next
init silently reused.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from urllib.parse import quote

from mindledger.compose import Home

# The files an init creates in the home (the SQLite ledger and its journals).
LEDGER_SUFFIXES = ("", "-wal", "-shm", "-journal")


class Creation:
    """What existed before an init, to remove what the init added if it fails."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.new_folders = _missing_folders(home.path)
        self.ledger_files = [
            p for p in (Path(f"{home.ledger}{s}") for s in LEDGER_SUFFIXES) if not p.exists()
        ]
        self.config: bytes | None = (
            home.config_file.read_bytes() if home.config_file.is_file() else None
        )

    def undo(self) -> None:
        """Remove the ledger files and folders the init created; restore config.json.

        A ledger that holds events is left alone: another init running at the same time
        created it and succeeded."""
        with contextlib.suppress(OSError):
            if self.ledger_files and not _holds_events(self.home.ledger):
                for path in self.ledger_files:
                    path.unlink(missing_ok=True)
            if self.config is None:
                self.home.config_file.unlink(missing_ok=True)
            elif self.home.config_file.read_bytes() != self.config:
                self.home.config_file.write_bytes(self.config)
            for folder in self.new_folders:  # innermost first; only if nothing else is there
                folder.rmdir()


def _holds_events(ledger: Path) -> bool:
    if not ledger.exists():
        return False
    try:
        con = sqlite3.connect(f"file:{quote(str(ledger))}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT count(*) FROM ledger_chain").fetchone()
            return bool(row and row[0] > 0)
        finally:
            con.close()
    except sqlite3.Error:
        return False  # no chain table: nothing was ever recorded in it


def _missing_folders(path: Path) -> list[Path]:
    """`path` and its ancestors that do not exist yet, innermost first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing
