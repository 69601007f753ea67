"""Where `mind backup` may write: DEST checked before anything is read or written, its
missing parents made (and removed again if the backup fails), the finished copy renamed onto it."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError, MindError
from mindledger.domain.private_files import FOLDER_MODE
from mindledger.output_paths import click_name, refuse_link, refuse_standard_output


def checked_dest(home: Home, dest: Path) -> Path:
    """`dest` made absolute, or InvalidInputError when it cannot take a backup: inside the home,
    an existing file or non-empty folder, or below a file."""
    shown = click_name(dest)
    try:
        if not str(dest).strip():
            raise InvalidInputError("`dest` is empty: name a new or empty folder for the backup")
        refuse_standard_output(dest, "dest")  # not a folder named "-" in the working folder
        dest = Path(os.path.abspath(dest))
        if not _utf8(str(dest)):  # it could never be opened: a home's path is UTF-8 text
            raise InvalidInputError(
                f"`dest` {shown} is not UTF-8 text, and a mind's home must be (`home` takes "
                "no other); name a folder whose path is UTF-8"
            )
        root, target = home.path.resolve(), dest.resolve()
        if target == root or target.is_relative_to(root):
            raise InvalidInputError(
                f"`dest` {shown} is inside this mind's home {click_name(root)}: a backup must "
                "live outside it; nothing was written"
            )
        refuse_link(dest, "dest", " (new or empty)")  # as an export's folder
        if dest.exists() and not dest.is_dir():
            raise InvalidInputError(
                f"`dest` {shown} exists and is not a folder; name a new or empty folder"
            )
        if dest.exists() and any(dest.iterdir()):
            raise InvalidInputError(
                f"`dest` {shown} exists and is not empty; name a new or empty folder "
                "(a backup never mixes with other files)"
            )
        above = next((p for p in dest.parents if p.exists() or p == p.parent), dest)
        if not above.is_dir():
            raise InvalidInputError(
                f"`dest` {shown}: {click_name(above)} is not a folder; name a folder whose "
                "parents are folders"
            )
    except (OSError, ValueError, RuntimeError) as e:  # NUL, too long, a loop, no permission
        raise InvalidInputError(f"`dest` {shown} cannot be used: {why(e)}") from None
    return dest


def make_parents(folder: Path) -> list[Path]:
    """`folder` and its missing parents made (0700, as DEST), outermost first; the ones made."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    made: list[Path] = []
    try:
        for path in reversed(missing):
            path.mkdir(mode=FOLDER_MODE)
            made.append(path)
    except OSError as e:
        for path in reversed(made):
            with contextlib.suppress(OSError):
                path.rmdir()
        raise MindError(f"cannot create {click_name(folder)!r}: {why(e)}") from None
    return made


def rename_into_place(work: Path, dest: Path) -> None:
    """`work` becomes `dest` (rename replaces an empty folder; one made non-empty meanwhile
    refuses it)."""
    os.chmod(work, FOLDER_MODE)
    try:
        os.rename(work, dest)
    except OSError as e:
        raise MindError(f"cannot create {click_name(dest)!r}: {why(e)}") from None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def why(e: BaseException) -> str:
    """An OS error's reason on one line."""
    said = getattr(e, "strerror", None) or str(e) or type(e).__name__
    return " ".join(str(said).split())
