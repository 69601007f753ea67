"""`mind status` and `mind commitments` read without DuckDB, pydantic or the application, when
they can: from the ledger's head (SQLite, read-only) and the read model's summary
(`projections/engine/summary.py`), which the projector writes at each position it reaches.

A listing must include every event written before it (read-your-writes): the summary is used
only when its position and hash are the ledger's head, it was written for this release's
tables, and the file's DuckDB header is the one it was written for (`summary.vouches_for`:
a damaged file is read, and so rebuilt, by the floor instead of looking healthy here).
It is used only in the plain case too: a SQLite home with no setting but the home
given (no MIND_* setting in the environment, no .env, no config.json: those are validated by
the typed settings, which this path does not import), no forget left to finish, and no other
projector holding the read model (a follower's readers see its published copy). In every
other case these return None and the command runs as before, through the floor, and says
what it says there (an error, a lag).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# The fields of `settings.Settings` (a test checks the two agree): any of them set, but the
# home, and the typed settings must check it.
SETTING_NAMES = frozenset(
    {
        "home",
        "now",
        "allow_past_now",
        "backend",
        "postgres_dsn",
        "postgres_schema",
        "master_key",
        "lock_timeout",
        "api_base",
        "model_timeout",
        "model_retries",
        "max_tokens",
        "model_fallbacks",
        "mock_reply",
        "query_timeout",
        "query_max_rows",
        "query_max_bytes",
    }
)
PATH_MAX, NAME_MAX = 4096, 255  # as settings_sources refuses a home path


def quick_status(home: Path) -> dict[str, Any] | None:
    """What `status` (`read_use_cases.status`) gives, as its JSON; None: ask the floor."""
    current = _current(home)
    if current is None:
        return None
    from mindledger.compose import Home
    from mindledger.vector_projection import vectors_line

    meta, head, _, identity = current
    projections = [{"name": "main", "position": head[0], "lag": 0}]
    vectors = vectors_line(Home(home), head[0], identity.config)  # as `status_data` says it
    if vectors is not None:
        projections.append(vectors)
    return {
        "home": str(home),
        "backend": "sqlite",
        "name": identity.name,
        "model": identity.model,
        "ledger_id": meta[0],
        "created_at": meta[1],
        "head": {"position": head[0], "hash": head[1]},
        "projections": projections,
    }


def quick_commitments(home: Path) -> list[dict[str, Any]] | None:
    """The open commitments as `commitments(False)` gives them, as JSON; None: ask the floor."""
    current = _current(home)
    if current is None:
        return None
    commitments = current[2].get("commitments")
    return commitments if isinstance(commitments, list) else None


def quick_recall(home: Path, query: str) -> dict[str, Any] | None:
    """What `recall(query)` gives at the default budget, as JSON, read through the same
    `recall.recall_from` with the home's read model opened as the floor opens it (caught up
    under the projector lock: read-your-writes) but without the typed settings (the plain
    case, as above, and an embedding model that needs none: the offline one, or off); None:
    ask the floor."""
    from mindledger.domain.settings import (
        DEFAULT_EMBEDDING_MODEL,
        DEFAULT_EMBEDDING_RECALL,
        EMBEDDING_MODEL,
        EMBEDDING_RECALL,
    )
    from mindledger.offline_embedder import LOCAL_PREFIX

    if not query.strip() or not _plain(home) or not _encodable(query):
        return None
    config = _identity_config(home)
    if config is None:
        return None
    model = config.get(EMBEDDING_MODEL, DEFAULT_EMBEDDING_MODEL)
    recall_on = config.get(EMBEDDING_RECALL, DEFAULT_EMBEDDING_RECALL) == "on"
    if recall_on and model != "off" and not model.startswith(LOCAL_PREFIX):
        return None  # a provider's embedder reads the provider settings
    from mindledger.compose import Home
    from mindledger.domain.budgets import DEFAULT_BUDGET
    from mindledger.home_modes import warn_if_shared
    from mindledger.recall import recall_from

    warn_if_shared(home)  # as opening the home does (once per process)
    return recall_from(Home(home), config, lambda: _read_model(home), query, DEFAULT_BUDGET)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _identity_config(home: Path) -> dict[str, str] | None:
    """The mind's per-mind settings from its identity's rows (None: no mind, a damaged
    ledger: the floor says which)."""
    from mindledger.adapters.sqlite_reader import SQLiteLedgerReader
    from mindledger.domain.errors import MindError
    from mindledger.identity_view import read_identity

    try:
        reader = SQLiteLedgerReader(home / "ledger.sqlite")
    except (OSError, MindError):
        return None
    try:
        return dict(read_identity(reader).config)
    except MindError:
        return None
    finally:
        reader.close()


@contextmanager
def _read_model(home: Path) -> Iterator[Any]:
    """The read model caught up to the ledger head, as `compose.read_model` opens it for a
    SQLite home with no master key."""
    from mindledger.adapters.key_store import SQLiteKeyStore
    from mindledger.adapters.sqlite_reader import SQLiteLedgerReader
    from mindledger.compose import Home, read_model_paths
    from mindledger.projections.engine.readmodel import open_read_model

    mind = Home(home)  # its paths only: no setting is read
    keys = SQLiteKeyStore(mind.key_store, None, read_only=True)
    try:
        reader = SQLiteLedgerReader(mind.ledger, keys)
    except BaseException:
        keys.close()
        raise
    paths = read_model_paths(mind)
    try:
        with open_read_model(paths, reader) as con:
            yield con
    finally:
        reader.close()  # and its key store


def _current(home: Path) -> tuple[Any, Any, dict[str, Any], Any] | None:
    """(ledger meta, head, summary, identity) when the summary is at the head, else None."""
    if not _plain(home):
        return None
    from mindledger.adapters.sqlite_reader import SQLiteLedgerReader
    from mindledger.domain.errors import MindError
    from mindledger.home_modes import warn_if_shared
    from mindledger.identity_view import read_identity
    from mindledger.projections.engine.schema import schema_version
    from mindledger.projections.engine.summary import read_summary, vouches_for

    if not _projector_free(home / "projector.lock"):
        return None
    warn_if_shared(home)  # as opening the home does (once per process)
    try:
        reader = SQLiteLedgerReader(home / "ledger.sqlite")
    except (OSError, MindError):
        return None
    try:
        head = reader.head()
        summary = read_summary(home / "readmodel.duckdb")
        if summary is None or [summary.get("position"), summary.get("hash")] != list(head):
            return None
        if not vouches_for(summary, home / "readmodel.duckdb"):
            return None  # damaged or replaced since: the floor reads it (and rebuilds it)
        if summary.get("schema") != schema_version():
            return None
        return reader.meta(), head, summary, read_identity(reader)
    except MindError:
        return None  # not a mind yet, a damaged ledger: the floor says which
    finally:
        reader.close()


def _plain(home: Path) -> bool:
    """A SQLite home whose only setting is the home, no forget left to finish."""
    for key, value in os.environ.items():
        name = key.lower()
        setting = name.startswith("mind_") and name[5:] in SETTING_NAMES and value != ""
        if setting and key != "MIND_HOME":
            return False
    try:
        text = str(home).encode("utf-8")
    except UnicodeEncodeError:
        return False
    if len(text) > PATH_MAX or any(len(p.encode()) > NAME_MAX for p in home.parts):
        return False
    try:
        return (
            home.is_dir()
            and (home / "ledger.sqlite").is_file()
            and not (home / ".env").exists()
            and not (home / "config.json").exists()
            and not (home / "forget.pending").exists()
        )
    except OSError:
        return False


def _projector_free(lock: Path) -> bool:
    """Whether no projector holds the read model now (a look, not held: the summary is
    replaced whole, and readers of a held one see its published copy instead)."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing the only descriptor releases the look's lock
    return True
