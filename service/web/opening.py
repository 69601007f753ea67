"""Opening the sealed fields of the event payloads the web page shows.

The read model's `events.payload` keeps each event as the ledger stores it, its sealed fields
as envelopes (so forgetting leaves no plaintext there); the views open the payloads they show
with the home's key store, one key-store read per query, as the ledger reader opens its rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mindledger.adapters.key_store import KeyStore
from mindledger.adapters.sealing import open_rows
from mindledger.compose import Home, open_keys
from mindledger.domain.events import FORGOTTEN_MARK

# Rows with `type`, `aggregate`, `version` and `payload` (as the read model holds it) -> each
# row's payload decoded and opened: sealed text in the clear, "[forgotten]" where its key is gone.
Opener = Callable[[Sequence[dict[str, Any]]], list[dict[str, Any]]]


@dataclass(frozen=True)
class _Stored:
    """A read-model event row in the shape `open_rows` reads (a ledger row's)."""

    topic: str | None
    originator_id: str | None
    version: int | None
    state: bytes | None


def payload_opener(keys: KeyStore | None) -> Opener:
    """An `Opener` over `keys` (None: payloads are only decoded, as for a ledger never sealed)."""

    def opened(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        stored = [
            _Stored(r["type"], r["aggregate"], r["version"], _bytes(r["payload"])) for r in rows
        ]
        states = open_rows(stored, keys)
        for state in states:
            state.pop(FORGOTTEN_MARK, None)  # as `mind log --json` shows a payload
        return states

    return opened


def _bytes(payload: Any) -> bytes | None:
    if payload is None:
        return None
    return payload.encode() if isinstance(payload, str) else bytes(payload)


@contextmanager
def home_opener(home: Home) -> Iterator[Opener]:
    """An `Opener` with the home's key store, released afterwards."""
    keys = open_keys(home)
    try:
        yield payload_opener(keys)
    finally:
        keys.close()
