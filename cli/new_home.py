"""A home made by `mind import ledger`: refused unless it holds no mind, and removed again, file
by file, when the import fails (as cli/init_cleanup.py does for a failed init), so a refused
import leaves no half-made home behind."""

from __future__ import annotations

import contextlib
from pathlib import Path

from mindledger.cli.init_cleanup import LEDGER_SUFFIXES, _missing_folders
from mindledger.cli.output_paths import click_name
from mindledger.compose import Home
from mindledger.domain.errors import AlreadyInitialisedError, InvalidInputError


class NewHome:
    """The files and folders an import may create, noted before it starts."""

    def __init__(self, home: Home, files: list[Path], folders: list[Path]) -> None:
        self.home, self.files, self.folders = home, files, folders

    @classmethod
    def prepare(cls, home: Home) -> NewHome:
        """Refuse a home that already holds a mind (or another mind's files); note what is new."""
        if home.path.exists() and not home.path.is_dir():
            raise InvalidInputError(
                f"{click_name(home.path)} is a file, not a folder; give --home a new folder"
            )
        files = [Path(f"{home.ledger}{s}") for s in LEDGER_SUFFIXES]
        files += [Path(f"{home.key_store}{s}") for s in LEDGER_SUFFIXES]  # the carried keys
        files += [home.head_anchor, home.readmodel, home.published]
        files += [Path(f"{p}.wal") for p in (home.readmodel, home.published)]
        present = [p for p in files if p.exists()]
        if present:
            raise AlreadyInitialisedError(
                f"{click_name(home.path)} already holds a mind ({present[0].name}); a ledger is "
                "imported only into a new home: give --home a new folder"
            )
        return cls(home, files, _missing_folders(home.path))

    def undo(self) -> None:
        """Remove every file and folder the import created (none of them existed before)."""
        with contextlib.suppress(OSError):
            for path in self.files:
                path.unlink(missing_ok=True)
            for folder in self.folders:  # innermost first; only if nothing else is there
                folder.rmdir()
