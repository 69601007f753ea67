"""The workspace: the folder whose files count as evidence of work on a thread.

A file credits work only when it is inside the workspace (no absolute path, no `..`, no symlink
leading out), is not one of the mind's own ledger, read-model or journal files, and was modified
after the cycle started. Modification time is what the filesystem says (st_mtime, UTC).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath, PureWindowsPath

from mindledger.domain.errors import MindError

# The mind's own state and the journals of the stores it uses: never evidence of work.
PROTECTED_SUFFIXES = (
    ".sqlite",
    ".sqlite-wal",
    ".sqlite-shm",
    ".sqlite-journal",
    ".duckdb",
    ".duckdb.wal",
    "-journal",
    "-wal",
    "-shm",
)


class FileWorkspace:
    """A directory on disk; `protected` are files that never count (the home's own files)."""

    def __init__(self, root: Path, protected: tuple[Path, ...] = ()) -> None:
        self.root = root
        self._protected = protected

    @functools.cached_property
    def protected(self) -> tuple[Path, ...]:
        """The protected files resolved, once a path is checked: a turn builds its workspace
        and most replies cite no file (resolving the home's seven paths was ~0.1 ms a turn)."""
        return tuple(p.resolve() for p in self._protected)

    def _resolve(self, path: str) -> tuple[Path, str]:
        text = path.strip()
        if not text or "\x00" in text:
            raise MindError("an artifact path must be a non-empty file path")
        if PurePosixPath(text).is_absolute() or PureWindowsPath(text).is_absolute():
            raise MindError(f"{text!r} is absolute; give a path inside the workspace")
        if ".." in PurePosixPath(text.replace("\\", "/")).parts:
            raise MindError(f"{text!r} uses '..'; give a path inside the workspace")
        root = self.root.resolve()
        full = (root / text).resolve()
        if not full.is_relative_to(root):
            raise MindError(f"{text!r} leads outside the workspace (through a link)")
        name = full.name.lower()
        if (
            full in self.protected
            or any(full.is_relative_to(p) for p in self.protected if p.is_dir())
            or name.endswith(PROTECTED_SUFFIXES)
            or name.startswith("journal")
        ):
            raise MindError(f"{text!r} is a ledger or journal file; it is not evidence of work")
        if not full.is_file():
            raise MindError(f"no file {text!r} in the workspace ({root})")
        return full, full.relative_to(root).as_posix()

    def existing_file(self, path: str) -> str:
        """The workspace-relative path of an existing workspace file."""
        return self._resolve(path)[1]

    def changed_file(self, path: str, since: datetime) -> str:
        """The workspace-relative path of a workspace file modified after `since`."""
        full, relative = self._resolve(path)
        modified = datetime.fromtimestamp(full.stat().st_mtime, UTC)
        if modified <= since:
            raise MindError(
                f"{relative} was last changed at {modified.isoformat()}, before this cycle "
                f"started ({since.isoformat()}); change it, then cite it"
            )
        return relative
