"""The ledger checked and carried: `mind verify` (the home's ledger, or an export file with no
mind) and `mind import ledger` (an export made the ledger of a new home). The formats:
adapters/ledger_export.py and adapters/export_check.py."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindledger.compose import Home, finish_forgets, open_mind
from mindledger.domain.errors import MindError
from mindledger.export import Bar, Progress, counted, no_progress
from mindledger.export_trial import projected
from mindledger.ledger_reads import verify_home
from mindledger.projections.engine.gc_pause import paused_gc

if TYPE_CHECKING:
    from mindledger.adapters.export_check import ExportReader


def verify_ledger(
    home: Home, head: str | None = None, *, error_as_failure: bool = False
) -> dict[str, Any]:
    """Recompute every hash of the home's ledger and compare it with every head kept outside it
    and `head` (what `mind verify --json` prints). A ledger that cannot be read raises
    MindError, or with `error_as_failure` is a failed verification."""
    from mindledger.adapters.hash_chain import VerifyResult

    try:
        finish_forgets(home)  # a forget a crash interrupted, like every command that opens it
        result = verify_home(home, head)
    except MindError as e:
        if not error_as_failure:
            raise
        result = VerifyResult(False, 0, None, str(e), None)
    data: dict[str, Any] = result.as_json()
    return data


def verify_export(
    path: Path,
    head: str | None = None,
    progress: Progress = no_progress,
    *,
    deep: bool = False,
    error_as_failure: bool = False,
) -> dict[str, Any]:
    """Check an export file line by line, no mind needed (what `mind verify --export --json`
    prints; decision 0028). By default its integrity, as `mind verify` checks a home's: the
    header and genesis, each line's position, prev link and hash recomputed from the bytes the
    chain hashed, the count and head. `deep` adds the import's trial: every line read whole,
    its keys opening their envelopes, every event read as replay reads it and applied to a
    scratch read model (`export_trial`). `ok` false at the first bad line, or when `head` (a
    hash kept elsewhere) is no event's hash in it. A file that cannot be read raises
    MindError, or with `error_as_failure` is a failed check."""
    from mindledger.adapters.export_check import ExportInvalidError, ExportReader
    from mindledger.adapters.export_open import open_export

    started = time.perf_counter()
    level = "deep" if deep else "integrity"
    data: dict[str, Any] = {
        "ok": True,
        "level": level,
        "file": str(path),
        "line": None,
        "reason": None,
    }
    try:
        with open_export(path, _waiting_for(path)) as handle:
            reader = ExportReader(handle)
            header = reader.header
            # Acyclic objects by the million, as a catch-up makes them: the collector's walks
            # of every live object were a tenth of the deep check.
            with progress(header.events, "verifying") as bar, paused_gc():
                if deep:
                    found = _trial(reader, head, bar)
                else:
                    found = reader.chain(head, _told(bar)).anchor_position
        data.update(
            events=header.events,
            head=header.head,
            ledger_id=header.genesis.ledger_id,
            genesis=header.genesis.genesis,
        )
        if head is not None:
            data["anchor"] = {"hash": head, "position": found}
            if found is None:
                data.update(
                    ok=False,
                    reason=f"--head {head[:16]}... is not the hash of any event in this export "
                    "(the file was rewritten, or the hash is another ledger's)",
                )
    except ExportInvalidError as e:
        data.update(ok=False, line=e.line, reason=e.reason, events=None, head=None)
    except MindError as e:
        if not error_as_failure:
            raise
        data.update(ok=False, reason=str(e), events=None, head=None)
    data["seconds"] = round(time.perf_counter() - started, 3)
    return data


def _trial(reader: ExportReader, head: str | None, bar: Bar) -> int | None:
    """The deep check: every event read whole and applied as replay would (`projected`);
    the position of the event whose hash is `head` (0: the genesis; None: none)."""
    found = 0 if head == reader.header.genesis.genesis else None
    for event in counted(projected(reader.events()), bar):
        if event.hash == head:
            found = event.position
    return found


def _told(bar: Bar) -> Callable[[int], None]:
    """A count of lines done, told to a bar that is told how many more."""
    told = 0

    def tell(done: int) -> None:
        nonlocal told
        bar.update(done - told)
        told = done

    return tell


def import_ledger(home: Home, path: Path, progress: Progress = no_progress) -> dict[str, Any]:
    """Make an export (`mind export --format jsonl`) the ledger of a new home, every line
    checked as it is read (as `verify_export` checks it: a mind that could not replay it is
    never made); a bad line stops the import and leaves nothing behind (what `mind
    import ledger --json` prints). The read models build on the next reading call."""
    from mindledger.adapters.export_check import ExportReader
    from mindledger.adapters.export_open import open_export
    from mindledger.adapters.ledger_import import adopt_genesis, append_exported, discard_imported
    from mindledger.home_creation import NewHome

    started = time.perf_counter()
    with open_export(path, _waiting_for(path)) as handle:
        reader = ExportReader(handle)  # a bad header stops here, before anything is created
        header = reader.header
        created = NewHome.prepare(home)
        adopted = None  # the recorder, once its ledger is known to have been empty
        added: set[bytes] = set()  # the ids of the keys the import stored
        app = None
        try:
            app = open_mind(home, create=True)
            adopt_genesis(app.recorder, header.genesis)  # refuses a ledger holding events
            adopted = app.recorder
            with progress(header.events, "importing") as bar, paused_gc():
                written = append_exported(
                    adopted, projected(reader.events()), on_batch=bar.update, added_keys=added
                )
            app.close()
        except BaseException:
            if adopted is not None:  # never another mind's events: only what this import wrote
                with contextlib.suppress(Exception):
                    discard_imported(adopted, added)
            if app is not None:
                with contextlib.suppress(Exception):
                    app.close()  # its connections go before its files do
            created.undo()
            raise
        size = reader.bytes_read
    return {
        "file": str(path),
        "home": str(home.path),
        "backend": home.backend(),
        "events": written,
        "head": header.head,
        "ledger_id": header.genesis.ledger_id,
        "bytes": size,
        "seconds": round(time.perf_counter() - started, 3),
    }


def _waiting_for(path: Path) -> Callable[[], None]:
    """What an export read from a FIFO says once while nobody writes to it yet (as an output
    to a FIFO nobody reads says it waits for a reader)."""

    def waiting() -> None:
        # Imported here, when it is said: they load the terminal's text rules (~2 ms of a
        # check's start; most files are not FIFOs).
        from mindledger.notices import say
        from mindledger.output_paths import click_name

        say(f"waiting for a writer on FIFO {click_name(path)} (Ctrl-C to stop)")

    return waiting
