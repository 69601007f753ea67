"""Files the user names for output (a report's or graph's `out`, an export's `folder`, a
replay's `target`), written as Unix tools write them; every command that writes a named path
goes through here. Errors name the path by the floor's argument (its request word).

- A regular file, or a name not there yet, gets the new bytes in a temporary file beside it,
  renamed over it only once complete: a failed write leaves whatever was there.
- A FIFO or a character device (`/dev/null`, `/dev/stdout`) is opened and written, never
  replaced; `-` is standard output. A FIFO nobody reads yet is waited for, as `>` waits, after
  one line on standard error saying so (Ctrl-C stops the wait).
- A symbolic link is refused, never written through or replaced (a link to `/proc/self/fd/1`,
  or to a file elsewhere, would otherwise become a regular file); so are a folder, a block
  device and a socket.
- Never anything inside the home (a refused export once truncated the ledger: the output was
  opened before the input was read); every file there is the mind's own or one it may make.
- An export's folder is never a symbolic link or `-` (as `mind backup`'s DEST); one made, or
  found empty, is made 0700 (its files carry the mind's words and keys).

The permission bits a written file or folder gets are decided in one place, `file_mode` and
`FOLDER_MODE`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import BinaryIO

from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.private_files import FILE_MODE, private_folder
from mindledger.domain.private_files import FOLDER_MODE as PRIVATE_FOLDER_MODE
from mindledger.notices import say

STDOUT = "-"
FOLDER_MODE = 0o777  # less the umask, as `mkdir` makes a folder
NEW_FILE_MODE = 0o666  # less the umask, as `>` makes a file


class OutputPathError(InvalidInputError):
    """Raised when a path named for output cannot be written as named: a symbolic link, a
    folder, a block device, a folder that is missing or read-only, a full disk."""


def file_mode(existing: os.stat_result | None, private: bool = False) -> int:
    """The permission bits a written file gets: 0600 for a private output (an export holds
    the mind's words and keys, whatever the file it replaces allowed), else those of the file it
    replaces (as `>` keeps them), else an ordinary new file's (`NEW_FILE_MODE` less the umask)."""
    if private:
        return FILE_MODE
    if existing is not None:
        return stat.S_IMODE(existing.st_mode)
    return NEW_FILE_MODE & ~_umask()


def refuse_home_file(home: Home, path: Path, param: str) -> None:
    """Raise InvalidInputError when `path` is, or resolves to (symlink, `..`), the home folder
    or anything inside it: the ledger, its key store and journals, the read models, locks,
    logs and the workspace are all the mind's own, and a list of names would miss the next."""
    if str(path) == STDOUT:
        return
    try:
        root, target = home.path.resolve(), path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: the write itself fails in its own words
        return
    if target == root:
        raise InvalidInputError(
            f"`{param}` {click_name(path)} is this mind's own folder in {click_name(root)}; "
            "writing there could destroy it, nothing was written: choose a folder outside the home",
            param=param,
        )
    if target.is_relative_to(root):
        raise InvalidInputError(
            f"`{param}` {click_name(path)} is inside this mind's own home {click_name(root)}; "
            "writing there could destroy its files, nothing was written: choose a path outside "
            "the home",
            param=param,
        )


def refuse_standard_output(folder: Path, param: str) -> None:
    """Refuse `-` where a folder is named: files go into a folder, `-` is standard output."""
    if str(folder) == STDOUT:
        raise OutputPathError(
            f"`{param}` - is standard output, not a folder: give a folder's path", param=param
        )


def refuse_link(folder: Path, param: str, instead: str = "") -> None:
    """Refuse a folder named through a symbolic link: what is written lands where the link
    points, which may be anywhere (and may change between the check and the write)."""
    if os.path.islink(folder):
        raise OutputPathError(
            f"`{param}` {click_name(folder)} is a symbolic link (to "
            f"{click_name(os.readlink(folder))}); name the folder itself{instead}",
            param=param,
        )


def check_export_folder(home: Home, folder: Path, param: str) -> None:
    """Refuse, before any work, a folder an export cannot go into: `-`, the home or a place
    inside it, a symbolic link, something that is not a folder."""
    refuse_standard_output(folder, param)
    refuse_home_file(home, folder, param)
    refuse_link(folder, param)
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return
    except OSError as e:  # a parent that is a file, a name too long, no permission to look
        raise _cannot(folder, param, e) from None
    if not stat.S_ISDIR(st.st_mode):
        raise OutputPathError(
            f"`{param}` {click_name(folder)} is not a folder; give a folder's path", param=param
        )


def click_name(path: Path | str) -> str:
    """A path for an error line (undecodable bytes shown, not raised)."""
    return str(path).encode("utf-8", "backslashreplace").decode()


def check_output(path: Path, param: str) -> os.stat_result | None:
    """Refuse, before any work, a path that cannot be written as named; returns what is there
    now (None for nothing, or for `-`)."""
    if str(path) == STDOUT:
        return None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:  # a parent that is a file, a name too long, no permission to look
        raise _cannot(path, param, e) from None
    kind = stat.S_IFMT(st.st_mode)
    if kind in (stat.S_IFREG, stat.S_IFIFO, stat.S_IFCHR):
        return st
    if kind == stat.S_IFLNK:
        raise OutputPathError(
            f"`{param}` {click_name(path)} is a symbolic link "
            f"(to {click_name(os.readlink(path))}); links are never written through or "
            "replaced: name the file itself (or - for standard output)",
            param=param,
        )
    what = {stat.S_IFDIR: "a folder", stat.S_IFBLK: "a block device"}.get(kind, "a socket")
    raise OutputPathError(
        f"`{param}` {click_name(path)} is {what}; give a file, a FIFO, a character device or - "
        "(standard output)",
        param=param,
    )


def check_new_file(path: Path, param: str) -> None:
    """Refuse a path that is there already, a symbolic link included (even one that points
    nowhere: the new file would be made where it points)."""
    if os.path.lexists(path):
        raise OutputPathError(
            f"`{param}` {click_name(path)} exists; give a new file's name (one not there yet)",
            param=param,
        )


@contextlib.contextmanager
def output_file(path: Path, param: str, private: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write `path`'s new bytes to (see the module's rules): a temporary file
    renamed over a regular file once the block ends without error, else the FIFO, device or
    standard output itself."""
    existing = check_output(path, param)
    if str(path) == STDOUT:
        yield from _standard_output()
    elif existing is not None and not stat.S_ISREG(existing.st_mode):
        yield from _stream(path, param, stat.S_ISFIFO(existing.st_mode))
    else:
        yield from _replacing(path, param, existing, private)


@contextlib.contextmanager
def output_path(path: Path, param: str, private: bool = False) -> Iterator[Path]:
    """A new file's name for a writer that opens files itself (DuckDB, matplotlib), in a
    private temporary folder; once the block ends without error its bytes go to `path` as
    `output_file` puts them (renamed over a regular file, else copied into the stream)."""
    existing = check_output(path, param)
    regular = str(path) != STDOUT and (existing is None or stat.S_ISREG(existing.st_mode))
    parent = path.parent if regular else None  # beside the file: one rename, same filesystem
    try:
        folder = Path(tempfile.mkdtemp(prefix=f".{path.name[:40]}.", suffix=".part", dir=parent))
    except OSError as e:
        raise _cannot(path, param, e) from None
    try:
        temp = folder / "output"
        yield temp
        if regular:
            try:
                os.chmod(temp, file_mode(existing, private))
                os.replace(temp, path)
            except OSError as e:
                raise _cannot(path, param, e) from None
        else:
            with open(temp, "rb") as made, output_file(path, param, private) as out:
                shutil.copyfileobj(made, out, 1 << 20)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def make_folder(folder: Path, param: str, private: bool = False) -> None:
    """Create `folder` and its parents (one there already is used as it is); a private one (an
    export's) is made 0700, and so is one found empty (it becomes the export's own; a folder
    that holds other files keeps its mode, and the export's files are 0600 in it)."""
    refuse_standard_output(folder, param)
    try:
        if private and folder.is_dir() and not any(folder.iterdir()):
            with contextlib.suppress(OSError):  # not ours to change: its files stay 0600
                os.chmod(folder, PRIVATE_FOLDER_MODE)
        elif private:
            private_folder(folder)
        folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputPathError(
            f"`{param}` {click_name(folder)} is not a folder", param=param
        ) from None
    except OSError as e:
        raise OutputPathError(
            f"cannot create the folder {click_name(folder)!r}: {e.strerror or e}"
        ) from None


def refuse_overwrite(folder: Path, names: list[str], param: str, force: bool) -> None:
    """Refuse an export into a folder that holds an earlier one's files, unless `force`:
    replacing them is asked for, never assumed."""
    there = [name for name in names if os.path.lexists(folder / name)]
    if there and not force:
        shown = ", ".join(there[:3]) + (f" and {len(there) - 3} more" if len(there) > 3 else "")
        raise OutputPathError(
            f"`{param}` {click_name(folder)} already holds {shown}; nothing was written: give "
            f"`force` to replace {'it' if len(there) == 1 else 'them'}, or choose another folder",
            param=param,
        )


def _standard_output() -> Generator[BinaryIO, None, None]:
    sys.stdout.flush()  # what was printed before comes first
    try:
        fd = os.dup(sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (a test's capture): its own buffer
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    # A file of its own on the descriptor: a failed write leaves nothing behind in
    # sys.stdout's buffer for the interpreter to fail on again as it exits.
    out = os.fdopen(fd, "wb")
    try:
        yield out
        out.flush()
    except OSError as e:
        raise OutputPathError(f"cannot write the output ({e.strerror or e})") from None
    finally:
        with contextlib.suppress(OSError):
            out.close()


def _stream(path: Path, param: str, fifo: bool) -> Generator[BinaryIO, None, None]:
    fd = _open_stream(path, param, fifo)
    with os.fdopen(fd, "wb") as out:
        try:
            yield out
            out.flush()
        except OSError as e:
            raise _cannot(path, param, e) from None


def _open_stream(path: Path, param: str, fifo: bool) -> int:
    # O_NOFOLLOW: a link put there since `check_output` looked is refused, not followed.
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
    try:
        if fifo:
            # A FIFO with no reader would block the open with no word: said once, then
            # waited for, as `>` waits (Ctrl-C stops it).
            try:
                fd = os.open(path, flags | os.O_NONBLOCK)
            except OSError as e:
                if e.errno != errno.ENXIO:  # ENXIO: nobody has it open for reading yet
                    raise
                say(f"waiting for a reader on FIFO {click_name(path)} (Ctrl-C to stop)")
            else:
                os.set_blocking(fd, True)
                return fd
        return os.open(path, flags)
    except OSError as e:
        raise _cannot(path, param, e) from None


def _replacing(
    path: Path, param: str, existing: os.stat_result | None, private: bool = False
) -> Generator[BinaryIO, None, None]:
    fd, temp = _new_temp(path, param, file_mode(existing, private))
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())  # whole on disk before it takes the name
        os.replace(temp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise _cannot(path, param, e) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _new_temp(path: Path, param: str, mode: int) -> tuple[int, Path]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        temp = path.parent / f".{path.name[:40]}.{os.urandom(4).hex()}.part"
        try:
            fd = os.open(temp, flags, mode)
        except FileExistsError:
            continue
        except OSError as e:
            raise _cannot(path, param, e) from None
        os.fchmod(fd, mode)  # exactly `mode`: os.open's is less the umask
        return fd, temp
    raise OutputPathError(f"cannot write {click_name(path)!r}: no free temporary name beside it")


def _cannot(path: Path, param: str, e: OSError) -> OutputPathError:
    return OutputPathError(
        f"cannot write `{param}` {click_name(path)!r}: {e.strerror or e}", param=param
    )


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
