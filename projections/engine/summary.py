"""The read model's summary: a small JSON file beside the projector's working file saying what
`mind status` and `mind commitments` print of it, so that those two read it with the standard
library instead of starting DuckDB (its import and the floor's were most of their start-up).

It holds the ledger position and hash the working file includes, the tables' fingerprint, the
CRC of the file's DuckDB header (`vouches_for`), and the open commitments as
`listings.commitments` gives them. The projector writes it after each
catch-up that moved (`Projector.catch_up`), under the projector lock, replacing it whole
(`os.replace`), so a reader sees one summary or another, never a mix. It is not in the read
model's transaction: a projector that dies between its commit and the summary leaves an older
summary, which readers take only when its position and hash are the ledger's head (and its
fingerprint this release's tables); anything else, they read the read model itself
(`mindledger.quick_reads`). Projection is a function of the ledger's prefix, so a summary at
the head is what a catch-up to the head would list. Whatever replaces or deletes the working
file replaces or deletes its summary too (a forget's purge: no forgotten word may outlive it).

Its reader takes the standard library only: it must not import DuckDB (the writer's query is
the projector's, `projector.py`, which encodes the file with the orjson it has loaded).
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from pathlib import Path
from typing import Any

from mindledger.domain.private_files import private_opener

FORMAT = 1  # of the file: a reader takes only the format it knows
# DuckDB's main header: the file's first block, written when the file is made and never again
# (checkpoints write the two database headers after it, and the data blocks). Its CRC in the
# summary lets a reader notice, for one read of 4 KiB, bytes flipped there or a file replaced
# behind the summary; a file shorter than the three header blocks, or not a whole number of
# 4 KiB blocks, is cut short. Damage deeper in the file is met by DuckDB at the next read,
# which rebuilds the read model (`mindledger.read_model_repair`). A CRC, not a digest: it
# notices accidents (a disk, an editor, a copy), which is all a derived file needs.
HEADER_BYTES = 4096
HEADERS = 3  # the main header, then two database headers, each a block of HEADER_BYTES


def summary_path(working: Path) -> Path:
    """Where the summary of the read model at `working` lives (its temporary copies are
    `<that name>.<pid>.tmp`, which the read model's sweeps of `<file>.*.tmp*` also take)."""
    return working.with_name(f"{working.name}.summary.json")


def read_summary(working: Path) -> dict[str, Any] | None:
    """The summary of the read model at `working` as written, or None (none, unreadable, or
    another format)."""
    try:
        data = json.loads(summary_path(working).read_bytes())
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return data


def file_header(working: Path) -> int | None:
    """The CRC-32 of the read model's main header (`HEADER_BYTES` at the start of `working`);
    None when the file is missing, cut short or not a whole number of blocks."""
    try:
        with open(working, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < HEADERS * HEADER_BYTES or size % HEADER_BYTES:
                return None
            return zlib.crc32(f.read(HEADER_BYTES))
    except OSError:
        return None


def vouches_for(summary: dict[str, Any], working: Path) -> bool:
    """Whether `summary` was written for the file at `working` as it is now, as far as its
    header shows (see `HEADER_BYTES`): a summary of a damaged or replaced file is not taken."""
    header = summary.get("header")
    return isinstance(header, int) and header == file_header(working)


def write_summary(
    working: Path, schema: str, position: int, digest: str | None, commitments: Any
) -> None:
    """Replace the summary of the read model at `working` whole (0600). `commitments`: a list,
    or the JSON of one (an `orjson.Fragment`, the projector's: `listings.open_commitments_json`)."""
    target = summary_path(working)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    data = {
        "format": FORMAT,
        "schema": schema,
        "position": position,
        "hash": digest,
        "header": file_header(working),
        "commitments": commitments,
    }
    try:
        with open(tmp, "wb", opener=private_opener) as f:
            f.write(_encoded(data))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _encoded(data: dict[str, Any]) -> bytes:
    """`data` as UTF-8 JSON. The writer is the projector, which has orjson loaded (readers keep
    to the standard library): a tenth of `json.dumps`'s time on a catch-up's 20,000 open
    commitments."""
    import orjson

    return orjson.dumps(data)


def remove_summary(working: Path) -> None:
    """Delete the summary of the read model at `working` (the file is being replaced)."""
    summary_path(working).unlink(missing_ok=True)


def move_summary(source: Path, target: Path) -> None:
    """The read model at `source` became the one at `target` (a rename): its summary goes
    with it; with none, the target's old one is deleted (the next catch-up writes one)."""
    if summary_path(source).exists():
        os.replace(summary_path(source), summary_path(target))
    else:
        remove_summary(target)
