"""The identity's name, model and per-mind settings, read from its event rows without the
event-sourcing application.

`mind status` prints the name and model, and recall reads the per-mind settings (the embedding
ones): rebuilding the `Identity` aggregate for that imported eventsourcing and every event class
and opened the key store, more CPU than the rest of a `mind status` on a small home. None of
these fields is sealed, so the rows' JSON is read as it is. A PostgreSQL ledger is still read
through the application (`compose.identity_of`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mindledger.domain.errors import NotInitialisedError

if TYPE_CHECKING:
    from mindledger.adapters.sqlite_reader import SQLiteLedgerReader
    from mindledger.compose import Home

# The identity's stream, as `domain.identity.IDENTITY_ID` (that module imports eventsourcing):
# uuid5 of the mind's namespace and "identity"; a test checks the two agree.
IDENTITY_STREAM = "0b0bea2c290a51dc9fc6cd5dff6bbc84"
DEFAULT_MODEL = "local/smollm2-135m-instruct"  # domain.identity.DEFAULT_MODEL (tested equal)


@dataclass(frozen=True)
class IdentityView:
    """What `Identity` holds of its name, model and settings."""

    name: str = ""
    model: str = DEFAULT_MODEL
    config: dict[str, str] = field(default_factory=dict)


def fold(topics_and_states: list[tuple[str, dict[str, object]]]) -> IdentityView:
    """The identity's fields after these events, as `Identity`'s `when_*` methods set them
    (every identity event is at schema 1: a change of shape updates this with the upcast)."""
    name, model, config = "", DEFAULT_MODEL, {}
    for topic, state in topics_and_states:
        if topic == "mind.identity.created":
            name, model = str(state["name"]), str(state["model"])
        elif topic == "mind.identity.name_adopted":
            name = str(state["name"])
        elif topic == "mind.identity.model_switched":
            model = str(state["model"])
        elif topic == "mind.identity.configured":
            config[str(state["key"])] = str(state["value"])
    return IdentityView(name, model, config)


def identity_view(home: Home) -> IdentityView:
    """The mind's identity as the ledger holds it now; NotInitialisedError before `init`."""
    if home.backend() != "sqlite":
        from mindledger.compose import identity_of

        found = identity_of(home)
        return IdentityView(found.name, found.model, dict(found.config))
    from mindledger.adapters.sqlite_reader import SQLiteLedgerReader
    from mindledger.compose import finish_forgets

    home.require()
    finish_forgets(home)  # as opening the application does: a read never shows a forgotten text
    try:
        reader = SQLiteLedgerReader(home.ledger)  # no key store: no field read here is sealed
    except FileNotFoundError:
        raise NotInitialisedError("no mind here yet; run `mind init` first") from None
    try:
        return read_identity(reader)
    finally:
        reader.close()


def read_identity(reader: SQLiteLedgerReader) -> IdentityView:
    """The identity as the rows of an SQLite ledger's `reader` hold it."""
    rows = reader.stream(IDENTITY_STREAM)
    if not rows:
        raise NotInitialisedError("no mind here yet; run `mind init` first")
    return fold([(r.topic or "", json.loads(r.state or b"{}")) for r in rows])


def plain_sqlite_name(folder: Path) -> str | None:
    """The mind's name read from a SQLite ledger with the standard library alone, before the
    settings are loaded (`mind mcp` answers `initialize` with it while the rest imports); None
    whenever that cannot be told so cheaply: another backend may be set (the environment, .env
    or config.json name one), a forget is unfinished, no ledger or identity is there. The
    caller then takes the usual path, which also refuses what is wrong."""
    for name, value in os.environ.items():
        if name.upper() == "MIND_BACKEND" and value not in ("", "sqlite"):
            return None
    for file, word in ((".env", "backend"), ("config.json", "backend")):
        try:
            if word in (folder / file).read_text(encoding="utf-8", errors="replace").lower():
                return None
        except FileNotFoundError:
            continue
        except OSError:
            return None
    if (folder / "forget.pending").exists():  # mindledger.forget.MARKER: finished first
        return None
    from mindledger.adapters.sqlite_reader import SQLiteLedgerReader

    try:
        reader = SQLiteLedgerReader(folder / "ledger.sqlite")
    except Exception:  # no ledger, or not one: the usual path says so
        return None
    try:
        rows = reader.stream(IDENTITY_STREAM)
    except Exception:
        return None
    finally:
        reader.close()
    if not rows:
        return None
    return fold([(r.topic or "", json.loads(r.state or b"{}")) for r in rows]).name or None
