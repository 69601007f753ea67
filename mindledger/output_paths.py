"""Files the user names for output (`--out`, `--into`, `export FOLDER`).

Never one of the home's own files (a refused export once truncated the ledger: the output was
opened before the input was read), and written to a temporary file beside the target that is
renamed into place only once complete, so a failed write leaves whatever was there.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError, MindError

# The home's own entries; a name starting with a prefix is a companion (SQLite's -wal/-shm/
# -journal, DuckDB's .wal, the anchor's and replay's temporary files).
HOME_ENTRIES = (
    "ledger-head.json",
    "config.json",
    ".env",
    "projector.lock",
    "run",
    "chat_history",
)
HOME_PREFIXES = ("ledger.sqlite", "readmodel.", "embeddings.sqlite", ".ledger-head.", "replay-")


def refuse_home_file(home: Home, path: Path, flag: str) -> None:
    """Raise InvalidInputError when `path` is, or resolves to (symlink, `..`), the home folder,
    one of its own files or folders, or a place inside one of its folders."""
    try:
        root, target = home.path.resolve(), path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: the write itself fails in its own words
        return
    inside = target.relative_to(root).parts if target.is_relative_to(root) else None
    if inside is None:
        return
    if inside and inside[0] not in HOME_ENTRIES and not inside[0].startswith(HOME_PREFIXES):
        return
    what = "folder" if not inside else repr(inside[0])
    raise InvalidInputError(
        f"{flag} {click_name(path)} is this mind's own {what} in {click_name(root)}; writing "
        "there would destroy it, nothing was written: choose a path outside the home's files"
    )


def click_name(path: Path) -> str:
    """A path for an error line (undecodable bytes shown, not raised)."""
    return str(path).encode("utf-8", "backslashreplace").decode()


@contextlib.contextmanager
def replaced_on_success(path: Path) -> Iterator[Path]:
    """A temporary file beside `path`, renamed over `path` when the block ends without error
    (and removed when it fails, so an existing file keeps its bytes)."""
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".part", dir=path.parent)
    except OSError as e:
        raise MindError(f"cannot write {click_name(path)!r}: {e.strerror or e}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as an ordinary new file (mkstemp makes it 0600)
        os.close(fd)
        yield Path(temp)
        os.replace(temp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise MindError(f"cannot write {click_name(path)!r}: {e.strerror or e}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
