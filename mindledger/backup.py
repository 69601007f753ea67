"""`mind backup DEST`: a copy of a SQLite home that opens as a working mind, taken while the mind
keeps writing (a server, a turn, a projector), checked before it is named DEST.

What goes in: the ledger and the key store (each copied page by page through SQLite's online
backup API, adapters/sqlite_backup.py), config.json and .env (the settings the mind runs with),
and a head anchor written for the copied head. What stays out: the read models and the
embeddings cache, which are derived (rebuilt from the ledger on the copy's first read; a DuckDB
file a projector is writing has no online copy consistent with the ledger's snapshot), and the
process files (`run/`, locks, chat history, the workspace), which no mind needs to open. A
MIND_MASTER_KEY kept in the home's .env goes with it: keep it in the environment to keep it apart.

The rule that makes the pair trustworthy. Sealed text opens only with its data key, so the
ledger copy is worth nothing unless the key-store copy holds every key its events name:
- A recorder stores an event's keys (one committed key-store transaction) before it appends
  the event, and keys are otherwise only added. So a key store copied after the ledger's snapshot
  holds every key the copied events need: the ledger is copied first, the key store second.
- Only a forget deletes keys. A forget between the two copies would delete a key a copied event
  needs while the copied ledger has no `forget.forgotten` to say so: a copy with unreadable text
  and no record of why. So the copy holds the forget lock shared (as a turn does) from before the
  ledger's snapshot until the key store is copied: a forget waits for the backup (and a backup
  for a forget under way). A forget a crash interrupted (its keys gone, its note in the key
  store, no event yet) is finished before the copy starts; if one is still noted in the copied
  key store, the copy gets the `forget.pending` marker, so its first command finishes it.
- Checked, not assumed: every key id the copied ledger names is in the copied key store, or is
  gone from the home's own key store too (forgotten before the copy, as the home shows it). A key
  the copy lacks and the home still has fails the backup, and nothing is named DEST.
Then the copy's chain is recomputed against the anchor written for it (`mind verify` in DEST).
Everything is written into a hidden folder beside DEST and renamed to DEST only once checked.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from mindledger.backup_dest import checked_dest, make_parents, rename_into_place, why
from mindledger.compose import Home, finish_forgets, open_keys
from mindledger.domain.errors import InvalidInputError, LedgerCorruptError, MindError
from mindledger.domain.private_files import private_opener, tighten
from mindledger.export import Progress, no_progress
from mindledger.output_paths import click_name

SETTINGS_FILES = ("config.json", ".env")  # copied as they are: the settings the mind runs with
SKIPPED = "read models and embeddings cache (rebuilt from the ledger on first read)"


def backup_home(home: Home, dest: Path, progress: Progress = no_progress) -> dict[str, Any]:
    """Copy the mind at `home` into the new (or empty) folder `dest`; what `mind backup --json`
    prints. Refused, with nothing written, for a PostgreSQL mind or an unusable `dest`."""
    home.require()
    if home.backend() == "postgres":
        schema = home.settings.postgres_schema or "public"
        raise InvalidInputError(
            f"this mind's ledger and key store are in PostgreSQL (schema {schema}): back them up "
            f"together with `pg_dump --schema={schema}` (one snapshot holds both), and copy the "
            "home's config.json and .env; nothing was written"
        )
    dest = checked_dest(home, dest)
    finish_forgets(home)  # a forget a crash interrupted is finished before anything is copied
    started = time.perf_counter()
    made = make_parents(dest.parent)
    try:
        try:
            # A plain name (DEST's may hold undecodable bytes, which SQLite's URIs cannot carry).
            work = Path(tempfile.mkdtemp(prefix=".mind-backup-", suffix=".part", dir=dest.parent))
        except OSError as e:
            raise MindError(f"cannot write in {click_name(dest.parent)!r}: {why(e)}") from None
        try:
            done = _copy_into(home, work, progress)
            rename_into_place(work, dest)
        except OSError as e:  # a full disk, a folder taken away: said, and nothing left
            shutil.rmtree(work, ignore_errors=True)
            raise MindError(f"the backup failed ({why(e)}); nothing was named `dest`") from None
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    except BaseException:
        for folder in reversed(made):  # a failed backup leaves no folder it made
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return {
        "dest": click_name(dest),  # undecodable bytes shown as \\xff: JSON carries text only
        "ledger_id": done["ledger_id"],
        "events": done["events"],
        "head": done["head"],
        "files": sorted(p.name for p in dest.iterdir()),
        "bytes": sum(p.stat().st_size for p in dest.iterdir()),
        "verified": True,
        "forgotten_keys": done["forgotten_keys"],
        "pending_forgets": done["pending_forgets"],
        "skipped": SKIPPED,
        "seconds": round(time.perf_counter() - started, 3),
    }


def _copy_into(home: Home, work: Path, progress: Progress) -> dict[str, Any]:
    """The ledger, then the key store, under the forget lock; the settings; the anchor; the
    checks (see the module docstring)."""
    from mindledger.adapters.sqlite_backup import (
        copy_database,
        page_count,
        pending_forget_ids,
        settle,
    )
    from mindledger.forget import MARKER
    from mindledger.forget_lock import forget_excluded

    ledger, keys = work / home.ledger.name, work / home.key_store.name
    total = page_count(home.ledger) + (page_count(home.key_store) if home.key_store.exists() else 0)
    with progress(total, "backing up") as bar, forget_excluded(home):
        copy_database(home.ledger, ledger, bar.update)
        if home.key_store.exists():
            copy_database(home.key_store, keys, bar.update)
    pending = pending_forget_ids(keys) if keys.exists() else []
    if pending:  # a forget crashed after its keys went: the copy's first command finishes it
        _write_private(work / MARKER, (pending[0] + "\n").encode())
    for name in SETTINGS_FILES:
        if (home.path / name).is_file():
            _write_private(work / name, (home.path / name).read_bytes())
    # The copy is read with the settings of this command (the master key among them).
    copied = Home(work, {k: v for k, v in home.flags.items() if k != "home"})
    ledger_id, events, head = _anchor(copied)
    forgotten = _check_keys(home, copied)
    _verify(copied)
    for copy in (ledger, keys):
        if copy.exists():
            settle(copy)
    return {
        "ledger_id": ledger_id,
        "events": events,
        "head": head,
        "forgotten_keys": forgotten,
        "pending_forgets": len(pending),
    }


def _anchor(copied: Home) -> tuple[str, int, str | None]:
    """Write the copy's own `ledger-head.json`: its head, as a writer there would have."""
    from mindledger.adapters.head_anchor import HeadAnchorFile
    from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader

    reader = SQLiteLedgerReader(copied.ledger)
    try:
        ledger_id = reader.meta()[0]
        events, head = reader.head()
    finally:
        reader.close()
    if head is not None:
        HeadAnchorFile(copied.head_anchor).advance(ledger_id, events, head)
        tighten(copied.head_anchor)
    return ledger_id, events, head


def _check_keys(home: Home, copied: Home) -> int:
    """How many keys the copied ledger names that neither copy nor home has (forgotten);
    LedgerCorruptError when the copy lacks a key the home still has."""
    from mindledger.adapters.sqlite_backup import named_key_ids
    from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader

    reader = SQLiteLedgerReader(copied.ledger)
    try:
        named = named_key_ids((r.topic, r.state) for r in reader.rows())
    finally:
        reader.close()
    if not named:
        return 0
    missing = named - set(_keys_found(copied, named))
    lost = set(_keys_found(home, missing)) if missing else set()
    if lost:
        raise LedgerCorruptError(
            f"the copy's key store lacks {len(lost)} data keys the home still holds (its sealed "
            "text would not open); nothing was named `dest`: run the backup again"
        )
    return len(missing)


def _keys_found(home: Home, ids: set[bytes]) -> list[bytes]:
    keys = open_keys(home)
    try:
        return list(keys.get(ids))
    finally:
        keys.close()


def _verify(copied: Home) -> None:
    """The copy's chain recomputed and its end compared with its anchor: `mind verify` in the
    copy, less the read model (it has none) and without leaving a file behind."""
    from mindledger.adapters.head_anchor import HeadAnchorFile
    from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
    from mindledger.adapters.verification import verify_ledger

    anchor = HeadAnchorFile(copied.head_anchor).read()
    reader = SQLiteLedgerReader(copied.ledger)
    try:
        result = verify_ledger(reader, [anchor] if anchor is not None else [])
    finally:
        reader.close()
    if not result.ok:
        raise LedgerCorruptError(
            f"the copy does not verify ({result.reason}); nothing was named `dest`: run `mind "
            "verify` on this mind"
        )


def _write_private(path: Path, data: bytes) -> None:
    with open(path, "xb", opener=private_opener) as f:
        f.write(data)
