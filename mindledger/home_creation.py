"""Undoing a failed `mind init` or `mind import ledger`: whatever it created is removed, file by
file, so the next attempt starts clean and a refused import leaves no half-made home behind.

Without this, an init that failed after creating the ledger left a genesis row that the next
init silently reused.
"""

from __future__ import annotations

import contextlib
import stat
from pathlib import Path

from mindledger.compose import Home
from mindledger.domain.errors import AlreadyInitialisedError, InvalidInputError, MindError
from mindledger.output_paths import click_name

# The files an init creates in the home (the SQLite ledger and its journals).
LEDGER_SUFFIXES = ("", "-wal", "-shm", "-journal")


class Creation:
    """What existed before an init, to remove what the init added if it fails."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.new_folders = missing_folders(home.path)
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


class NewHome:
    """The files and folders an import may create, noted before it starts."""

    def __init__(self, home: Home, files: list[Path], folders: list[Path]) -> None:
        self.home, self.files, self.folders = home, files, folders
        # An empty folder given as the home is made private (0700) as the import opens it; a
        # refused import gives it back its mode (None: the import creates the folder).
        self.mode = None if folders else stat.S_IMODE(home.path.stat().st_mode)

    @classmethod
    def prepare(cls, home: Home) -> NewHome:
        """Refuse a home that already holds a mind (or another mind's files); note what is new."""
        if home.path.exists() and not home.path.is_dir():
            raise InvalidInputError(
                f"{click_name(home.path)} is a file, not a folder; give `home` a new folder"
            )
        files = [Path(f"{home.ledger}{s}") for s in LEDGER_SUFFIXES]
        files += [Path(f"{home.key_store}{s}") for s in LEDGER_SUFFIXES]  # the carried keys
        files += [home.head_anchor, home.readmodel, home.published]
        files += [Path(f"{p}.wal") for p in (home.readmodel, home.published)]
        present = [p for p in files if p.exists()]
        if present:
            raise AlreadyInitialisedError(
                f"{click_name(home.path)} already holds a mind ({present[0].name}); a ledger is "
                "imported only into a new home: give `home` a new folder"
            )
        return cls(home, files, missing_folders(home.path))

    def undo(self) -> None:
        """Remove every file and folder the import created (none of them existed before)."""
        with contextlib.suppress(OSError):
            for path in self.files:
                path.unlink(missing_ok=True)
            for folder in self.folders:  # innermost first; only if nothing else is there
                folder.rmdir()
            if self.mode is not None:
                self.home.path.chmod(self.mode)


def _holds_events(ledger: Path) -> bool:
    from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader

    if not ledger.exists():
        return False
    try:
        reader = SQLiteLedgerReader(ledger)  # read-only
    except MindError:
        return False  # no ledger tables: nothing was ever recorded in it
    try:
        return reader.head()[0] > 0
    except MindError:
        return False
    finally:
        reader.close()


def missing_folders(path: Path) -> list[Path]:
    """`path` and its ancestors that do not exist yet, innermost first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing
