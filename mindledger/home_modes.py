"""Whether a home is private (its folder 0700, its files 0600), the one warning when it is not,
and `mind doctor --fix`'s tightening. Files are made private where they are created
(`domain/private_files.py`); this finds homes made before that, or loosened by hand."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import NamedTuple

from mindledger.domain.private_files import FILE_MODE, FOLDER_MODE, SHARED_BITS
from mindledger.notices import warn

_warned: set[Path] = set()
_guard = threading.Lock()


class Loose(NamedTuple):
    """A file or folder in a home that the group or other users may use."""

    path: Path
    mode: int

    def line(self, home: Path) -> str:
        name = "the home folder" if self.path == home else str(self.path.relative_to(home))
        return f"{name} is mode {self.mode:o}"


def loose_entries(home: Path, *, deep: bool = True) -> list[Loose]:
    """The home folder and what is in it (every level when `deep`, else the top one) that the
    group or others may read, write or enter; symbolic links in it are not followed. The
    home itself may be one (a home kept on another disk): its folder's mode is what counts,
    a link's own is always 777 (read with lstat, it warned on every command and --fix could
    not clear it)."""
    found: list[Loose] = []
    try:
        mode = stat.S_IMODE(os.stat(home).st_mode)
    except OSError:
        return found
    if mode & SHARED_BITS:
        found.append(Loose(home, mode))
    stack = [home]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            if stat.S_IMODE(info.st_mode) & SHARED_BITS:
                found.append(Loose(Path(entry.path), stat.S_IMODE(info.st_mode)))
            if deep and stat.S_ISDIR(info.st_mode):
                stack.append(Path(entry.path))
    return sorted(found, key=lambda e: str(e.path))


def warn_if_shared(home: Path) -> None:
    """One warning line per home per process when a home this user owns lets others in (a
    home another user lent read-only is theirs to fix, so it says nothing there). Each open
    looks again (one listing of the top folder) until it has warned."""
    if home in _warned:
        return
    try:
        if os.stat(home).st_uid != os.getuid():
            return
    except OSError:
        return
    loose = loose_entries(home, deep=False)
    with _guard:
        if not loose or home in _warned:
            return
        _warned.add(home)
    first = loose[0].line(home)
    more = f" and {len(loose) - 1} more" if len(loose) > 1 else ""
    warn(
        f"other users may read this mind's files ({first}{more}); "
        f"run `mind doctor --fix --home {home}` to make them private"
    )


def quiet(home: Path) -> None:
    """No warning for `home` in this process (`mind doctor` reports its modes itself)."""
    with _guard:
        _warned.add(home)


def tighten_home(home: Path) -> list[Loose]:
    """Take the group's and others' bits off the home and everything in it (folders 0700,
    files keep their owner bits, so 0600 or 0700); returns what it changed. Nothing is
    moved, removed or rewritten."""
    changed = []
    for entry in loose_entries(home):
        folder = entry.path.is_dir()
        private = FOLDER_MODE if folder else (entry.mode & ~SHARED_BITS) or FILE_MODE
        try:
            os.chmod(entry.path, private)
        except OSError:
            continue
        changed.append(entry)
    return changed
