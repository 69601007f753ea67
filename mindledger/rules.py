"""Rules every front-end shares, written once: how `as of` is read.

The command line's `--as-of`, the HTTP API's `as_of` and the floor's `as_of=` all parse here, so a
value means the same through each and is refused with the same words (the field's name aside)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from mindledger.domain.clock import parse_time
from mindledger.domain.errors import InvalidInputError

# Positions are stored as 64-bit signed integers (SQLite, DuckDB, PostgreSQL BIGINT).
MAX_POSITION = 2**63 - 1


@dataclass(frozen=True)
class AsOf:
    """The mind as it stood at a ledger position or a time, as written."""

    position: int | None = None
    time: datetime | None = None


class UnreadableAsOfError(InvalidInputError):
    """Raised when an as-of value is neither a ledger position nor an ISO-8601 time."""


def parse_as_of(value: str, name: str = "as_of") -> AsOf:
    """A ledger position (a whole number from 1) or an ISO-8601 time; `name` is the field or
    flag the value came in, for the one-line refusal."""
    text = value.strip()
    if text.isascii() and text.isdigit():  # not "²": int() refuses other digits
        # Checked by length first: int() refuses over 4,300 digits with a ValueError.
        digits = text.lstrip("0")
        if len(digits) > len(str(MAX_POSITION)) or int(digits or "0") > MAX_POSITION:
            shown = text if len(text) <= 30 else f"{text[:20]}... ({len(text):,} digits)"
            raise InvalidInputError(
                f"{name} {shown} is past any ledger position (at most 2**63-1); give a "
                "position within the ledger (`mind status` shows its head) or a time"
            )
        if int(text) < 1:
            raise UnreadableAsOfError("a ledger position starts at 1")
        return AsOf(position=int(text))
    try:
        return AsOf(time=parse_time(text))
    except InvalidInputError:
        raise UnreadableAsOfError(
            f"{text!r} is neither a ledger position (1, 2, ...) nor an ISO-8601 time "
            "(2026-05-01T09:30:00Z)"
        ) from None


# A head hash as `mind status` shows it (sha256, hex): what `verify --head` compares.
HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")


def checked_head(value: str | None, name: str = "head") -> str | None:
    """A head hash kept elsewhere, lower-cased; InvalidInputError naming `name` when it is not
    64 hexadecimal digits (a typo is refused, never reported as a ledger that differs)."""
    if value is None:
        return None
    if not HEX_DIGEST.fullmatch(value.strip()):
        raise InvalidInputError(
            "give a head hash: 64 hexadecimal digits (from `mind status`)", param=name
        )
    return value.strip().lower()
