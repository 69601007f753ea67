"""Taking a mind out and bringing it back: `mind export --format jsonl|md`, `mind verify --export`
and `mind import ledger` (the formats: adapters/ledger_export.py, adapters/export_check.py)."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home, finish_forgets, open_keys, open_mind, open_reader
from mindledger.domain.errors import MindError

LEDGER_FORMATS = ("jsonl", "md")
FILE_NAMES = {"jsonl": "ledger.jsonl", "md": "transcript.md"}
PROGRESS_FROM = 5000  # events: below this a bar would only flicker


@contextlib.contextmanager
def progress(total: int, label: str, enabled: bool = True) -> Iterator[Any]:
    """A progress bar on stderr when it is a terminal and the work is long; else a no-op."""
    if enabled and total >= PROGRESS_FROM and sys.stderr.isatty():
        with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
            yield bar
    else:
        yield _NoBar()


class _NoBar:
    def update(self, n: int) -> None:
        return None


def export_ledger(home: Home, folder: Path, fmt: str, show_progress: bool = True) -> dict[str, Any]:
    """Write the ledger up to its current head into FOLDER as ledger.jsonl or transcript.md."""
    from mindledger.adapters.ledger_export import Genesis, export_lines
    from mindledger.adapters.ledger_transcript import transcript
    from mindledger.cli.output_paths import click_name, refuse_home_file, replaced_on_success

    target = folder / FILE_NAMES[fmt]
    refuse_home_file(home, folder, "FOLDER")
    refuse_home_file(home, target, "FOLDER")
    finish_forgets(home)  # a forget a crash interrupted is finished before anything goes out
    reader = open_reader(home)
    keys = open_keys(home)  # the data keys each jsonl line carries for its envelopes
    try:
        genesis = Genesis(*reader.meta())
        events, head = reader.head()  # a snapshot: events written meanwhile are not exported
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise MindError(
                f"cannot create the folder {click_name(folder)!r}: {e.strerror or e}"
            ) from None
        started = time.perf_counter()
        written = 0
        with (
            progress(events, f"exporting {fmt}", show_progress) as bar,
            replaced_on_success(target) as temp,
            open(temp, "wb", buffering=1 << 20) as out,
        ):
            rows = _counted(reader.rows(stop=events), bar)
            if fmt == "jsonl":
                for line in export_lines(genesis, rows, events, head, keys):
                    written += out.write(line)
            else:
                for chunk in transcript(genesis, rows, events, head, reader.open_states):
                    written += out.write(chunk.encode())
    finally:
        keys.close()
        reader.close()
    return {
        "file": str(target),
        "format": fmt,
        "events": events,
        "head": head,
        "ledger_id": genesis.ledger_id,
        "bytes": written,
        "seconds": round(time.perf_counter() - started, 3),
    }


def _counted(rows: Any, bar: Any, every: int = 1000) -> Iterator[Any]:
    n = 0
    for row in rows:
        yield row
        n += 1
        if n == every:
            bar.update(n)
            n = 0
    bar.update(n)


def echo_export(data: dict[str, Any]) -> None:
    """`wrote 120 events to FOLDER/ledger.jsonl (34.1 KB, head 1f2e...) in 0.02s`."""
    echo(
        f"wrote {data['events']} events to {click.format_filename(data['file'])} "
        f"({data['bytes'] / 1024:.1f} KB, head {(data['head'] or '-')[:16]}) "
        f"in {data['seconds']:.2f}s"
    )


def verify_export(path: Path, as_json: bool, head: str | None = None) -> None:
    """`mind verify --export FILE [--head HASH]`: check an export without a mind; exit 1 at the
    first bad line, or when `head` (a hash kept elsewhere) is no event's hash in the file."""
    from mindledger.adapters.export_check import ExportInvalidError, ExportReader, open_export

    started = time.perf_counter()
    data: dict[str, Any] = {"ok": True, "file": str(path), "line": None, "reason": None}
    try:
        with open_export(path) as handle:
            reader = ExportReader(handle)
            header = reader.header
            found = 0 if head == header.genesis.genesis else None
            with progress(header.events, "verifying", not as_json) as bar:
                for event in _counted(reader.events(), bar):
                    if event.hash == head:
                        found = event.position
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
        if not as_json:
            raise
        data.update(ok=False, reason=str(e), events=None, head=None)
    data["seconds"] = round(time.perf_counter() - started, 3)
    if as_json:
        emit_json(data)
    elif data["ok"]:
        echo(f"OK: {data['events']} events, head {data['head']}")
        if head is not None:
            echo(f"  anchor --head (position {data['anchor']['position']}): found")
    elif data["line"] is None:
        echo(f"BROKEN: {data['reason']}", err=True)
    else:
        echo(f"BROKEN at line {data['line']}: {data['reason']}", err=True)
    if not data["ok"]:
        raise SystemExit(1)


@click.command(name="ledger")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def import_ledger(home: Home, path: Path, as_json: bool) -> None:
    """Import a ledger export (`mind export --format jsonl`) into a new home.

    Every line is checked as it is read; a bad line stops the import and leaves nothing behind.
    The new mind has the exported genesis and head hash; its read models build on the next
    reading command (or `mind project`).

    Example:

        mind --home ./restored import ledger ./backup/ledger.jsonl
    """
    from mindledger.adapters.export_check import ExportReader, open_export
    from mindledger.adapters.ledger_import import adopt_genesis, append_exported, discard_imported
    from mindledger.cli.new_home import NewHome

    started = time.perf_counter()
    with open_export(path) as handle:
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
            with progress(header.events, "importing", not as_json) as bar:
                written = append_exported(
                    adopted, reader.events(), on_batch=bar.update, added_keys=added
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
    data = {
        "file": str(path),
        "home": str(home.path),
        "backend": home.backend(),
        "events": written,
        "head": header.head,
        "ledger_id": header.genesis.ledger_id,
        "bytes": size,
        "seconds": round(time.perf_counter() - started, 3),
    }
    if as_json:
        emit_json(data)
    else:
        echo(
            f"imported {written} events into {click.format_filename(home.path)} "
            f"(ledger {header.genesis.ledger_id[:12]}, head {header.head[:16]}) "
            f"in {data['seconds']:.2f}s"
        )
