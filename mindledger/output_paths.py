"""Files the user names for output (a report's or graph's `out`, an export's `folder`, a
replay's `target`), written as Unix tools write them; every command that writes a named path
goes through here. Errors name the path by the floor's argument (its request word).

- A regular file, or a name not there yet, gets the new bytes in a temporary file beside it,
  renamed over it only once complete: a failed write leaves whatever was there, and no
  temporary file.
- A FIFO or a character device (`/dev/null`) is opened and written, never replaced; `-` is
  standard output. A FIFO nobody reads yet is waited for, as `>` waits, after one line on
  standard error saying so (Ctrl-C stops the wait).
- A symbolic link is written through when it leads to this process's standard output
  (`/dev/stdout`, `/proc/self/fd/1`: written as `-`), a FIFO or a character device; a link to
  anything else (a file elsewhere, nothing) is refused in one line, never written through or
  replaced. So are a folder, a block device and a socket.
- Never anything inside the home (a refused export once truncated the ledger: the output was
  opened before the input was read); every file there is the mind's own or one it may make.
- An export's folder is never a symbolic link or `-` (as `mind backup`'s DEST). Its files are
  written into a private temporary folder (`output_folder`) and moved into place only once all
  of them are whole: a refused or failed export leaves nothing, not even a folder it made. One
  made, or found empty, ends up 0700 (its files carry the mind's words and keys).
- A new file a library makes itself (`mind replay --into`'s DuckDB file) is never `-`.

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
from mindledger.domain.private_files import FILE_MODE
from mindledger.domain.private_files import FOLDER_MODE as PRIVATE_FOLDER_MODE
from mindledger.notices import say

STDOUT = "-"
FOLDER_MODE = 0o777  # less the umask, as `mkdir` makes a folder
NEW_FILE_MODE = 0o666  # less the umask, as `>` makes a file


class OutputPathError(InvalidInputError):
    """Raised when a path named for output cannot be written as named: a symbolic link, a
    folder, a block device, a folder that is missing or read-only, a full disk."""

    reason: str | None = None  # the system's words when the system refused (a full disk)
    path: str | None = None  # the file or folder refused: where a full disk's line says it was


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
    return _target(path, param)[1]


# What a named output is, as `_target` finds it: written as standard output, opened and
# written (a FIFO or a character device, named or through a link), or a regular file (or a
# name not there yet) replaced whole.
STANDARD_OUTPUT, STREAM, REGULAR = "stdout", "stream", "regular"


def _target(path: Path, param: str) -> tuple[str, os.stat_result | None]:
    """How `path` is written (see the module) and what is there now; refused in one line when
    it cannot be written as named."""
    if str(path) == STDOUT:
        return STANDARD_OUTPUT, None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return REGULAR, None
    except OSError as e:  # a parent that is a file, a name too long, no permission to look
        raise _cannot(path, param, e) from None
    kind = stat.S_IFMT(st.st_mode)
    if kind == stat.S_IFREG:
        return REGULAR, st
    if kind in (stat.S_IFIFO, stat.S_IFCHR):
        return STREAM, st
    if kind == stat.S_IFLNK:
        return _through_link(path, param)
    what = {stat.S_IFDIR: "a folder", stat.S_IFBLK: "a block device"}.get(kind, "a socket")
    raise OutputPathError(
        f"`{param}` {click_name(path)} is {what}; give a file, a FIFO, a character device or - "
        "(standard output)",
        param=param,
    )


def _through_link(path: Path, param: str) -> tuple[str, os.stat_result | None]:
    """A symbolic link is written through only to a stream: this process's standard output
    (`/dev/stdout` is a link to `/proc/self/fd/1`, whatever stdout is), a FIFO or a character
    device. Replacing a file it points to would write wherever the link's owner chose."""
    with contextlib.suppress(OSError, RuntimeError):  # a loop or nothing there: refused below
        st = os.stat(path)
        if _is_standard_output(st):
            return STANDARD_OUTPUT, None
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
            return STREAM, st
    raise OutputPathError(
        f"`{param}` {click_name(path)} is a symbolic link "
        f"(to {click_name(os.readlink(path))}) that leads to no FIFO, device or standard "
        "output; links are never replaced: name the file itself (or - for standard output)",
        param=param,
    )


def names_standard_output(path: Path) -> bool:
    """Whether `path` is written as standard output: `-`, or a link that leads to it
    (`/dev/stdout`); a front-end prints nothing else there then ("wrote FILE")."""
    if str(path) == STDOUT:
        return True
    try:
        return os.path.islink(path) and _is_standard_output(os.stat(path))
    except (OSError, RuntimeError):
        return False


def _is_standard_output(st: os.stat_result) -> bool:
    try:
        return os.path.samestat(st, os.fstat(1))
    except OSError:  # standard output is closed
        return False


def check_new_file(path: Path, param: str) -> None:
    """Refuse `-` (the library writing it makes a file of that name, which cannot go to
    standard output) and a path that is there already, a symbolic link included (even one
    that points nowhere: the new file would be made where it points)."""
    if str(path) == STDOUT:
        raise OutputPathError(
            f"`{param}` - would be standard output, but this writes a database file, which "
            "cannot go to a stream: give a new file's name",
            param=param,
        )
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
    how, existing = _target(path, param)
    if how == STANDARD_OUTPUT:
        yield from _standard_output()
    elif how == STREAM:
        assert existing is not None
        yield from _stream(path, param, stat.S_ISFIFO(existing.st_mode))
    else:
        yield from _replacing(path, param, existing, private)


@contextlib.contextmanager
def output_path(path: Path, param: str, private: bool = False) -> Iterator[Path]:
    """A new file's name for a writer that opens files itself (DuckDB, matplotlib), in a
    private temporary folder; once the block ends without error its bytes go to `path` as
    `output_file` puts them (renamed over a regular file, else copied into the stream). The
    temporary folder goes on every way out."""
    how, existing = _target(path, param)
    regular = how == REGULAR
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


@contextlib.contextmanager
def output_folder(folder: Path, param: str) -> Iterator[Path]:
    """A private (0700) temporary folder to write an export's files into, on `folder`'s
    filesystem (inside it when it is there, else beside it). Once the block ends without error
    the files are made 0600 and moved into `folder`, each replacing one of its name; a new
    folder is the temporary one renamed into place, and an empty one is made 0700. On any
    failure (a full disk part of the way) the temporary folder goes, and so do the parents
    made for it: nothing is left behind."""
    refuse_standard_output(folder, param)
    there = folder.is_dir()
    made = [] if there else _make_parents(folder.parent, param)
    try:
        where = folder if there else folder.parent
        temp = Path(tempfile.mkdtemp(prefix=f".{folder.name[:40]}.", suffix=".part", dir=where))
    except OSError as e:
        _remove_folders(made)
        raise _cannot(folder, param, e) from None
    try:
        yield temp
        for name in os.listdir(temp):
            os.chmod(temp / name, FILE_MODE)  # a library made it with the umask's mode
        if there:
            _move_into(temp, folder, param)
        else:
            os.rename(temp, folder)  # a folder made meanwhile, and not empty: refused
    except OSError as e:
        _discard(temp, made)
        raise _cannot(folder, param, e) from None
    except BaseException:
        _discard(temp, made)
        raise


def _move_into(temp: Path, folder: Path, param: str) -> None:
    """Each file into `folder`: renamed over a regular file (or a name not there yet), copied
    into a FIFO or device of its name (opened and written, never replaced)."""
    empty = not any(p for p in folder.iterdir() if p != temp)
    for name in sorted(os.listdir(temp)):
        if _target(folder / name, param)[0] == REGULAR:
            os.replace(temp / name, folder / name)
        else:
            with open(temp / name, "rb") as made, output_file(folder / name, param) as out:
                shutil.copyfileobj(made, out, 1 << 20)
    shutil.rmtree(temp)
    if empty:  # it becomes the export's own; one that holds other files keeps its mode
        with contextlib.suppress(OSError):  # not ours to change: its files stay 0600
            os.chmod(folder, PRIVATE_FOLDER_MODE)


def _make_parents(parent: Path, param: str) -> list[Path]:
    """Make `parent` and its missing ancestors (ordinary modes); returns those made, the
    outermost first."""
    missing = []
    for ancestor in (parent, *parent.parents):
        if os.path.lexists(ancestor):
            break
        missing.append(ancestor)
    try:
        parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    except OSError as e:
        _remove_folders(list(reversed(missing)))
        raise OutputPathError(
            f"cannot create the folder {click_name(parent)!r}: {e.strerror or e}", param=param
        ) from None
    return list(reversed(missing))


def _discard(temp: Path, made: list[Path]) -> None:
    shutil.rmtree(temp, ignore_errors=True)
    _remove_folders(made)


def _remove_folders(made: list[Path]) -> None:
    for folder in reversed(made):  # innermost first; one that something else filled stays
        with contextlib.suppress(OSError):
            os.rmdir(folder)


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
    if sys.stdout is None:  # the process was started with it closed (`>&-`)
        raise OutputPathError("cannot write the output (standard output is closed)")
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
    fd = _open_stream(path, param, fifo, through=os.path.islink(path))
    with os.fdopen(fd, "wb") as out:
        try:
            yield out
            out.flush()
        except OSError as e:
            raise _cannot(path, param, e) from None


def _open_stream(path: Path, param: str, fifo: bool, through: bool = False) -> int:
    # O_NOFOLLOW: a link put there since `_target` looked is refused, not followed. A link
    # written through (to a FIFO or a device) is followed, and what it led to checked again.
    flags = os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY | (0 if through else os.O_NOFOLLOW)
    fd = _opened(path, param, fifo, flags)
    if through and stat.S_ISREG(os.fstat(fd).st_mode):  # the link was changed meanwhile
        os.close(fd)  # opened without O_TRUNC: nothing of that file was changed
        raise OutputPathError(
            f"`{param}` {click_name(path)} is a symbolic link that now leads to a regular "
            "file; nothing was written: name the file itself",
            param=param,
        )
    return fd


def _opened(path: Path, param: str, fifo: bool, flags: int) -> int:
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
    failed = OutputPathError(
        f"cannot write `{param}` {click_name(path)!r}: {e.strerror or e}", param=param
    )
    failed.reason = e.strerror or str(e)
    failed.path = os.fspath(path)
    return failed


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
