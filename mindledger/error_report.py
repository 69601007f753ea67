"""Every front-end's failure message, made in one place (`failure_message`): our own words plus,
where it helps, the first line of what caused them; never a traceback, a dependency's URL (LiteLLM
appends bug-report links, pydantic docs links), a path inside the installed packages, or a
secret. What the message leaves out goes to the home's `logs/errors.log` (private, appended,
bounded) under a short error id that the message names; with no home, nowhere and no id.
"""

from __future__ import annotations

import os
import re
import secrets as random
import sys
import sysconfig
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from mindledger.disk_full import disk_full_message, is_disk_full
from mindledger.domain.errors import MindError
from mindledger.domain.import_kept import import_kept
from mindledger.domain.redaction import redact, secret_values
from mindledger.domain.turn_kept import kept_turn

ERRORS_LOG = Path("logs") / "errors.log"
MAX_LOG = 1_000_000  # bytes: past it the log moves to errors.log.1 (one older file kept)
CHAIN = 10  # causes followed at most (a cycle ends it sooner)
_TRACEBACK = "Traceback (most recent call last)"
_FRAME = re.compile(r"[ \t]*File \"[^\"\n]*\", line \d+[^\n]*")
_URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`]+", re.IGNORECASE)
# A server on this machine (the loopback model server, an --api-base the user gave) helps; the
# URL may end a parenthesis or a clause (`(pid 7, http://127.0.0.1:8421) already serves`).
_LOOPBACK = re.compile(
    r"^[a-z]+://(?:[^@/\s]*@)?(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?(?:[/?#),;]|$)",
    re.IGNORECASE,
)
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][^\s\"'<>:;,()\[\]{}]+)+")
_CODE = (".py", ".pyc", ".pyi", ".so", ".pyd")
# DuckDB names the file a write failed on: `IO Error: Could not write file "/x/t.csv": ...`
# (its async writes quote that inside JSON: `file \"/x/t.csv\"`).
_DUCKDB_FILE = re.compile(r'\bfile \\?"(/[^"\\\n]+)\\?"')
# A dependency's exception named with its module (`litellm.APIConnectionError:`): not our words.
_QUALIFIED_CLASS = re.compile(r"\b(?:[A-Za-z_]\w*\.)+[A-Z]\w*(?:Error|Exception|Warning)\b:?\s*")


def failure_message(
    e: BaseException,
    home: Path | None,
    secrets: Sequence[str] = (),
    *,
    unexpected: str = "unexpected failure",
    cause: bool = True,
    full_path: bool = True,
) -> str:
    """What a front-end says about `e`. A MindError's own words; a ledger error's, prefixed;
    anything else is `unexpected` plus (with `cause`) the first line of its text; a full disk is
    said as such, whatever raised it (`disk_full`). When something
    was left out, the traceback is logged in `home` and the message ends with its error id and
    where the log is. `full_path`: paths as they are; else, for a client of a server that is
    not on its machine, the home and what is in it named within the home (`within_home`)."""
    said = _failure_message(e, home, secrets, unexpected, cause, full_path)
    return said if full_path else within_home(said, home)


def within_home(text: str, home: Path | None) -> str:
    """`text` with `home`'s path named as a client elsewhere knows it: a file in the home as
    "the mind's logs/errors.log", the home itself as "the mind's home" (its path, as given
    and resolved; a longer name it begins is another folder, left as it is)."""
    if home is None:
        return text
    for path in dict.fromkeys((str(home), _resolved(home))):
        if len(path) > 1:  # never "/"
            text = re.sub(re.escape(path) + r"/+(?=[^\s/])", "the mind's ", text)
            text = re.sub(re.escape(path) + _END, NEUTRAL_HOME, text)
    return text


NEUTRAL_HOME = "the mind's home"
# Where a path ends: not before a name's next character (`/x/mind2`, `/x/mind.bak` are other
# folders), a sentence's full stop aside.
_END = r"(?![\w\-]|\.[\w\-]|/\S)"


def _resolved(home: Path) -> str:
    try:
        return str(home.resolve())
    except (OSError, RuntimeError):  # a loop or a name the system refuses: as given only
        return str(home)


def _failure_message(
    e: BaseException,
    home: Path | None,
    secrets: Sequence[str],
    unexpected: str,
    cause: bool,
    full_path: bool,
) -> str:
    chain = _chain(e)
    if is_disk_full(chain, home):  # what to do is all there is to say; no log could be written
        where = _full_where(chain, home, full_path)
        return disk_full_message(chain, home, where, kept_turn(chain), import_kept(chain))
    hidden = [*secrets, *_home_secrets(home)]
    known = isinstance(e, MindError)
    text = str(e) if known else first_line(str(e))
    if _is_persistence_error(e):
        known, text = True, f"ledger error: {text}"
    elif not known:
        text = f"{unexpected}: {text}" if cause and text else unexpected
    cleaned = clean_text(_shorten_causes(text, e), hidden)
    if known and " ".join(cleaned.split()) == " ".join(redact(text, hidden).split()):
        return cleaned  # nothing left out: no traceback worth keeping
    error_id = log_failure(e, home, hidden)
    if error_id is None:
        return cleaned
    where = str(home / ERRORS_LOG) if full_path and home is not None else f"the mind's {ERRORS_LOG}"
    return f"{cleaned} (error id {error_id}; details in {where})"


def _full_where(chain: Sequence[BaseException], home: Path | None, full_path: bool) -> str | None:
    """Where a write found no room: the file an OSError, an output's error or DuckDB's words
    name (an export's, outside the home), else the home (for a remote client, "the mind's
    home": it is not told the server's paths)."""
    if not full_path:
        return None if home is None else NEUTRAL_HOME
    for c in chain:
        named = c.filename if isinstance(c, OSError) else None
        if isinstance(c, MindError):
            named = getattr(c, "path", None)  # OutputPathError's
        if isinstance(named, str | os.PathLike) and os.fspath(named):
            return _outside_temp(os.fspath(named))
        quoted = _DUCKDB_FILE.search(str(c))
        if quoted:
            return _outside_temp(quoted.group(1))
    return None if home is None else str(home)


def _outside_temp(path: str) -> str:
    """`path`, or the folder holding the temporary `.NAME.XXXX.part` or `NAME.PID.tmp` it is
    or lies in (an output, or a read model set aside, is written there and renamed: the user
    knows the folder, never the temporary name, which is gone by the time it is read)."""
    parts = Path(path).parts
    for i, part in enumerate(parts):
        temporary = (part.startswith(".") and part.endswith(".part")) or part.endswith(".tmp")
        if temporary and i > 0:
            return str(Path(*parts[:i]))
    return path


def first_line(text: str) -> str:
    """The first line of `text` that says something (a cause's text may start with a newline)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def clean_text(text: str, secrets: Sequence[str] = ()) -> str:
    """`text` without a traceback, frames, a URL other than a loopback one, a path inside the
    installed packages (its file name is kept), a dependency's module-qualified class name, or
    a secret (`domain.redaction.redact`)."""
    text = text.split(_TRACEBACK, 1)[0]
    text = _FRAME.sub("", text)
    text = _URL.sub(lambda m: m.group() if _LOOPBACK.match(m.group()) else "", text)
    text = _PATH.sub(_unless_package_path, text)
    text = _QUALIFIED_CLASS.sub("", text)
    return redact(text, secrets).strip().rstrip(" :")


def log_failure(e: BaseException, home: Path | None, secrets: Sequence[str]) -> str | None:
    """Append `e`'s whole chain of tracebacks, redacted, to the home's errors log under a new
    error id; the id, or None when there is no home or the log cannot be written."""
    if home is None or not _is_mind_home(home):
        return None
    error_id = random.token_hex(3)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    entry = f"{when} error {error_id}\n{redact(_tracebacks(e), secrets).rstrip()}\n\n"
    path = home / ERRORS_LOG
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        if path.exists() and path.stat().st_size + len(entry) > MAX_LOG:
            os.replace(path, path.with_name(path.name + ".1"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)  # a log made before by other means is private too
        with os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace") as log:
            log.write(entry)
    except OSError:  # a read-only home: the message names no id it could not keep
        return None
    return error_id


def was_disk_full(e: BaseException, home: Path | None) -> bool:
    """Whether `e` (or a cause of it) says the disk was full (`disk_full`)."""
    return is_disk_full(_chain(e), home)


def was_unavailable(e: BaseException) -> bool:
    """Whether `e` (or a cause of it) is PostgreSQL refusing or ending a session (a restart, a
    failover, a server shutting down): a retry may pass, so a front-end says "unavailable", not
    "failed". psycopg's OperationalError covers exactly those (and serialisation failures, also
    worth a retry); SQLite's errors are left to their own refusals."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None:  # never imported here: no PostgreSQL session to lose
        return False
    kinds = (psycopg.OperationalError, psycopg.InterfaceError)
    return any(isinstance(c, kinds) for c in _chain(e))


def causes(e: BaseException) -> list[BaseException]:
    """`e` and its causes, outermost first (`CHAIN` at most)."""
    return _chain(e)


def _chain(e: BaseException) -> list[BaseException]:
    """`e` and its causes, outermost first; a cause a wrapper hid (`from None`) counts too."""
    found: list[BaseException] = []
    cause: BaseException | None = e
    while cause is not None and cause not in found and len(found) < CHAIN:
        found.append(cause)
        cause = cause.__cause__ or cause.__context__
    return found


def _tracebacks(e: BaseException) -> str:
    parts = ["".join(traceback.format_exception(c, chain=False)) for c in reversed(_chain(e))]
    return "\nwhich led to:\n\n".join(parts)


def _shorten_causes(text: str, e: BaseException) -> str:
    """A cause's text quoted whole in the message (`f"...: {e}"`) cut to its first line."""
    for c in _chain(e)[1:]:
        quoted = str(c)
        if "\n" in quoted.strip() and quoted in text:
            text = text.replace(quoted, first_line(quoted))
    return text


def _is_persistence_error(e: BaseException) -> bool:
    persistence = sys.modules.get("eventsourcing.persistence")
    return persistence is not None and isinstance(e, persistence.PersistenceError)


def _home_secrets(home: Path | None) -> list[str]:
    if home is None:
        return secret_values(os.environ.items())
    from mindledger.safe_text import configured_secrets

    return configured_secrets(home)


def _is_mind_home(home: Path) -> bool:
    """A folder a mind lives in (not one `mind init` has yet to make, nor any other folder)."""
    try:
        return any((home / n).exists() for n in ("ledger.sqlite", "keys.sqlite", "config.json"))
    except OSError:  # a name the system refuses (too long): no mind lives there
        return False


@cache
def _package_roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Folders whose every file is the installation's (the standard library, site-packages),
    and folders whose code files are (this package's source, when run from a checkout)."""
    paths = sysconfig.get_paths()
    whole = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    source = Path(__file__).resolve().parent.parent
    return tuple(sorted(whole)), (str(source),)


def _unless_package_path(match: re.Match[str]) -> str:
    path = match.group()
    whole, code = _package_roots()
    inside = any(path.startswith(root + os.sep) for root in whole)
    ours = path.endswith(_CODE) and any(path.startswith(root + os.sep) for root in code)
    if inside or ours or "site-packages" in path or "dist-packages" in path:
        return re.split(r"[\\/]", path)[-1]
    return path
