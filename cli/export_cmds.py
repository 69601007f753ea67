"""Taking a mind out and bringing it back: `mind export --format jsonl|md`, `mind verify --export`
and `mind import ledger` (the use cases: mindledger/export.py and mindledger/ledger_io.py); and
the progress bars the floor's long work is shown with."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mindledger.cli.arguments import GivenPath
from mindledger.cli.output import echo, emit_json, path_text
from mindledger.compose import Home

LEDGER_FORMATS = ("jsonl", "md")


PROGRESS_FROM = 5000  # events: below this a bar would only flicker


class TerminalBar:
    """The floor's `progress(done, total, doing)` drawn as a bar on stderr when it is a
    terminal and the work is long (`start_at` items or more); nothing when not `enabled`
    (--json). Decided at the first call (the total is known by then); closed with the block."""

    def __init__(self, enabled: bool, start_at: int = PROGRESS_FROM) -> None:
        self.enabled, self.start_at = enabled, start_at
        self.bar: Any = None
        self.decided = False
        self.done = 0

    def __enter__(self) -> TerminalBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            bar, self.bar = self.bar, None
            bar.__exit__(*exc)

    def __call__(self, done: int, total: int, doing: str) -> None:
        if not self.decided:
            self.decided = True
            if self.enabled and total >= self.start_at and sys.stderr.isatty():
                self.bar = click.progressbar(length=total, label=doing, file=sys.stderr)
                self.bar.__enter__()
        if self.bar is not None and done > self.done:
            self.bar.update(done - self.done)
        self.done = done


def echo_export(data: dict[str, Any]) -> None:
    """`wrote 120 events to FOLDER/ledger.jsonl (34.1 KB, head 1f2e...) in 0.02s`."""
    echo(
        f"wrote {data['events']} events to {path_text(data['file'])} "
        f"({data['bytes'] / 1024:.1f} KB, head {(data['head'] or '-')[:16]}) "
        f"in {data['seconds']:.2f}s"
    )


def verify_export(path: Path, as_json: bool, head: str | None = None, deep: bool = False) -> None:
    """`mind verify --export FILE [--head HASH] [--deep]`: check an export without a mind; exit
    1 at the first bad line, or when `head` (a hash kept elsewhere) is no event's hash in it."""
    from mindledger import verify_export as verify_file

    with TerminalBar(not as_json) as bar:
        data = verify_file(
            path, head, progress=bar, deep=deep, error_as_failure=as_json
        ).model_dump(mode="json")
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
@click.argument("path", type=GivenPath(exists=True, dir_okay=False, path_type=Path))
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
    from mindledger import import_ledger as import_file

    with TerminalBar(not as_json) as bar:
        data = import_file(path, home, progress=bar).model_dump(mode="json")
    if as_json:
        emit_json(data)
    else:
        echo(
            f"imported {data['events']} events into {path_text(home.path)} "
            f"(ledger {data['ledger_id'][:12]}, head {data['head'][:16]}) "
            f"in {data['seconds']:.2f}s"
        )
