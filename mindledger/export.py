"""Taking a mind out: the ledger up to its head as `ledger.jsonl` (every hash and the data keys
of its sealed text: the whole mind) or `transcript.md` (readable), written whole or not at all."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from mindledger.compose import Home, finish_forgets, open_keys, open_reader
from mindledger.domain.errors import MindError
from mindledger.domain.private_files import FILE_MODE, private_folder


class Bar(Protocol):
    """What a progress display is told: how many more items are done."""

    def update(self, n: int) -> None: ...


# A progress display for `total` items under `label`, or None for none (the front-end's).
Progress = Callable[[int, str], contextlib.AbstractContextManager[Bar]]


class _NoBar:
    def update(self, n: int) -> None:
        return None


@contextlib.contextmanager
def no_progress(total: int, label: str) -> Iterator[Bar]:
    """No progress shown."""
    yield _NoBar()


FILE_NAMES = {"jsonl": "ledger.jsonl", "md": "transcript.md"}


def export_ledger(
    home: Home, folder: Path, fmt: str, progress: Progress = no_progress
) -> dict[str, Any]:
    """Write the ledger up to its current head into `folder` as ledger.jsonl (`fmt` "jsonl") or
    transcript.md ("md"); what `mind export --json` prints. A file already there is replaced
    only once the new one is whole."""
    from mindledger.adapters.ledger_export import Genesis, export_lines
    from mindledger.adapters.ledger_transcript import transcript
    from mindledger.output_paths import click_name, refuse_home_file, replaced_on_success

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
            private_folder(folder)  # a new folder is 0700: the export is the whole mind
        except OSError as e:
            raise MindError(
                f"cannot create the folder {click_name(folder)!r}: {e.strerror or e}"
            ) from None
        started = time.perf_counter()
        written = 0
        with (
            progress(events, f"exporting {fmt}") as bar,
            replaced_on_success(target) as temp,
            open(temp, "wb", buffering=1 << 20) as out,
        ):
            os.fchmod(out.fileno(), FILE_MODE)  # every message and its keys: the owner's only
            rows = counted(reader.rows(stop=events), bar)
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


def counted(rows: Any, bar: Bar, every: int = 1000) -> Iterator[Any]:
    n = 0
    for row in rows:
        yield row
        n += 1
        if n == every:
            bar.update(n)
            n = 0
    bar.update(n)
