"""Taking a mind out and bringing it back: `mind export --format jsonl|md`, `mind verify --export`
and `mind import ledger` (the use cases: mindledger/export.py and mindledger/ledger_io.py); and
the progress bars the floor's long work is shown with."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home
from mindledger.export import Progress, no_progress

LEDGER_FORMATS = ("jsonl", "md")


PROGRESS_FROM = 5000  # events: below this a bar would only flicker


@contextlib.contextmanager
def progress(total: int, label: str, start_at: int = PROGRESS_FROM) -> Iterator[Any]:
    """A progress bar on stderr when it is a terminal and the work is long (`start_at` items
    or more); else a no-op."""
    if total >= start_at and sys.stderr.isatty():
        with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
            yield bar
    else:
        with no_progress(total, label) as bar:
            yield bar


def terminal_progress(total: int, label: str) -> contextlib.AbstractContextManager[Any]:
    """`progress`, shown (when stderr is a terminal and the work is long)."""
    return progress(total, label)


def shown_progress(enabled: bool, start_at: int = PROGRESS_FROM) -> Progress:
    """The `progress` a floor function is given: `progress`'s bar, or none when not
    `enabled` (with --json)."""
    if not enabled:
        return no_progress

    def bar(total: int, label: str) -> contextlib.AbstractContextManager[Any]:
        return progress(total, label, start_at)

    return bar


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
    from mindledger import ledger_io

    data = ledger_io.verify_export(
        path, head, shown_progress(not as_json), error_as_failure=as_json
    )
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
    from mindledger import ledger_io
    from mindledger.results_ledger import LedgerImported

    # `mindledger.import_ledger`, with a progress bar.
    data = ledger_io.import_ledger(home, path, shown_progress(not as_json))
    data = LedgerImported.model_validate(data).model_dump(mode="json")
    if as_json:
        emit_json(data)
    else:
        echo(
            f"imported {data['events']} events into {click.format_filename(home.path)} "
            f"(ledger {data['ledger_id'][:12]}, head {data['head'][:16]}) "
            f"in {data['seconds']:.2f}s"
        )
