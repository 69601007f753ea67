"""Taking a mind out: the ledger up to its head as `ledger.jsonl` (every hash and the data keys
of its sealed text: the whole mind) or `transcript.md` (readable), written whole or not at all."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from mindledger.compose import Home, finish_forgets, open_keys, open_reader


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
    home: Home, folder: Path, fmt: str, progress: Progress = no_progress, force: bool = False
) -> dict[str, Any]:
    """Write the ledger up to its current head into `folder` as ledger.jsonl (`fmt` "jsonl") or
    transcript.md ("md"); what `mind export --json` prints. A file of that name already there
    is refused unless `force`, and then replaced only once the new one is whole."""
    from mindledger.adapters.ledger_export import Genesis, export_lines
    from mindledger.adapters.ledger_transcript import transcript
    from mindledger.output_paths import (
        check_export_folder,
        check_output,
        output_file,
        output_folder,
        refuse_home_file,
        refuse_overwrite,
    )

    target = folder / FILE_NAMES[fmt]
    check_export_folder(home, folder, "folder")
    refuse_home_file(home, target, "folder")
    refuse_overwrite(folder, [target.name], "folder", force)
    check_output(target, "folder")  # a link or a folder of that name: refused before any work
    finish_forgets(home)  # a forget a crash interrupted is finished before anything goes out
    reader = open_reader(home)
    keys = open_keys(home)  # the data keys each jsonl line carries for its envelopes
    try:
        genesis = Genesis(*reader.meta())
        events, head = reader.head()  # a snapshot: events written meanwhile are not exported
        started = time.perf_counter()
        written = 0
        with (
            progress(events, f"exporting {fmt}") as bar,
            output_folder(folder, "folder") as temp,  # nothing left if it fails part-way
            output_file(temp / target.name, "folder", private=True) as out,  # words and keys
        ):
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
