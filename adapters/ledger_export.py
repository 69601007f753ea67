"""The ledger as a self-verifying JSON Lines file: a header with the genesis, then one event a line.

Version 3 (written since decision 0028; adapters/export_form.py): each event line carries the
stored state bytes verbatim (the chain hashed them), in a fixed form a checker can slice and
hash without parsing (adapters/export_chain.py). Every line has exactly one spelling, so any
changed byte is caught.

Version 2 (still read; `export_lines(version=2)` writes it for the tests that prove it): each
line is the canonical JSON (`canonical_json`) of one object; the state, canonical JSON of
{payload..., "timestamp": time, "_schema": schema (> 1 only)}, is shown decoded (`time`,
`schema`, `payload`) and the checker rebuilds the exact bytes; a state that does not rebuild
byte for byte is carried as `state_b64`.

Sealed fields stay the envelopes the ledger stores (adapters/sealing.py): the chain hashed them.
From version 2 an event line carries `keys`, {key id hex: base64 key}, the data keys that still
exist for its envelopes; a forgotten event's line has none, so it reads as forgotten wherever
it is imported. Version 1 files (plaintext payloads, no keys) are still read.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple

from mindledger.adapters.canonical import SCHEMA_KEY, canonical_json

if TYPE_CHECKING:  # (an export's check reads the constants here without the home verifier's module)
    from mindledger.adapters.hash_chain import ChainRow
    from mindledger.adapters.key_store import KeyStore

FORMAT = "mindledger-export"
FORMAT_VERSION = 3
READ_VERSIONS = (1, 2, 3)  # 1: no `keys` (written before sealing); 2: the state decoded
# The hash rule's name (adapters/hash_chain.py); a checker refuses a rule it does not know.
HASH_RULE = "mindledger/chain/v1: sha256(prev || sha256(len8 topic, aggregate, version, state))"
TIME_KEY = "timestamp"

HEADER_KEYS = frozenset(
    {"format", "version", "hash_rule", "ledger_id", "created_at", "genesis", "events", "head"}
)
EVENT_KEYS = frozenset(
    {"position", "topic", "aggregate", "version", "schema", "time", "payload", "hash", "prev"}
)
RAW_EVENT_KEYS = frozenset(
    {"position", "topic", "aggregate", "version", "state_b64", "hash", "prev"}
)
KEYS_FIELD = "keys"
KEY_BATCH = 1000  # event lines per key-store read


@functools.cache  # asked once per line
def event_shapes(version: int) -> tuple[frozenset[str], ...]:
    """The field sets an event line of this file version may have (`keys` from version 2)."""
    shapes = (EVENT_KEYS, RAW_EVENT_KEYS)
    if version < 2:
        return shapes
    return shapes + tuple(shape | {KEYS_FIELD} for shape in shapes)


class Genesis(NamedTuple):
    """What a ledger's chain starts from. (A tuple, not a frozen dataclass: the class costs an
    export check's start ~0.3 ms less.)"""

    ledger_id: str
    created_at: str
    genesis: str


def header_line(
    genesis: Genesis, events: int, head: str | None, version: int = FORMAT_VERSION
) -> bytes:
    """The first line: the genesis, how many events follow and the hash of the last."""
    return _line(
        {
            "format": FORMAT,
            "version": version,
            "hash_rule": HASH_RULE,
            "ledger_id": genesis.ledger_id,
            "created_at": genesis.created_at,
            "genesis": genesis.genesis,
            "events": events,
            "head": head or genesis.genesis,
        }
    )


def state_of(payload: dict[str, Any], time: str, schema: int) -> dict[str, Any]:
    """The stored state an event line's decoded fields stand for, as a value."""
    state = {**payload, TIME_KEY: time}
    if schema > 1:
        state[SCHEMA_KEY] = schema
    return state


def state_bytes(payload: dict[str, Any], time: str, schema: int) -> bytes:
    """The stored state an event line's decoded fields stand for (what the chain hashed)."""
    return canonical_json(state_of(payload, time, schema))


def render_state(state: bytes) -> dict[str, Any]:
    """An event's stored state as export fields: decoded when that rebuilds the same bytes.

    The one place an event's payload is rendered for export. Sealed fields stay envelopes (the
    chain hashed them); the line's `keys` open them, and a forgotten field has no key left."""
    try:
        decoded = json.loads(state)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and isinstance(decoded.get(TIME_KEY), str):
        schema = decoded.pop(SCHEMA_KEY, 1)
        time = decoded.pop(TIME_KEY)
        usable = isinstance(schema, int) and not isinstance(schema, bool) and schema >= 1
        if usable and state_bytes(decoded, time, schema) == bytes(state):
            return {"schema": schema, "time": time, "payload": decoded}
    return {"state_b64": base64.b64encode(bytes(state)).decode()}


def event_line(
    row: ChainRow, prev: str, keys: Mapping[bytes, bytes] | None = None, version: int = 3
) -> bytes:
    """One event's line of file `version`; `prev` is the hash of the line before (the genesis
    for the first); `keys`: the data keys that open its envelopes."""
    state = row.state if isinstance(row.state, bytes | bytearray | memoryview) else b""
    if version == 3:
        # Here, not at the top: the integrity check reads the constants above without it.
        from mindledger.adapters import export_form

        return export_form.event_line(
            row.position,
            str(row.originator_id),
            str(row.topic),
            row.version if row.version is not None else 0,
            bytes(state),
            keys or {},
            prev,
            row.hash,
        )
    line = {
        "position": row.position,
        "topic": row.topic,
        "aggregate": row.originator_id,
        "version": row.version,
        **render_state(bytes(state)),
        "hash": row.hash,
        "prev": prev,
    }
    if keys:
        line[KEYS_FIELD] = {i.hex(): base64.b64encode(k).decode() for i, k in keys.items()}
    return _line(line)


def export_lines(
    genesis: Genesis,
    rows: Iterable[ChainRow],
    events: int,
    head: str | None,
    keys: KeyStore | None = None,
    version: int = FORMAT_VERSION,
) -> Iterator[bytes]:
    """The whole file of `version` (3, or 2 as the previous release wrote it), line by line:
    the header, then each of the `events` rows, each with the keys `keys` still holds for its
    envelopes."""
    yield header_line(genesis, events, head, version)
    prev = genesis.genesis
    rows = iter(rows)
    while chunk := list(islice(rows, KEY_BATCH)):
        for row, carried in zip(chunk, _carried(chunk, keys), strict=True):
            yield event_line(row, prev, carried, version)
            prev = row.hash


def _carried(rows: list[ChainRow], keys: KeyStore | None) -> list[dict[bytes, bytes]]:
    """Each row's keys that still exist (one key-store read for the chunk)."""
    from mindledger.adapters.sealing import envelope_key  # the cipher's module: exporting only

    named = [_named_keys(row, envelope_key) for row in rows]
    wanted = {i for ids in named for i in ids}
    found = keys.get(wanted) if keys is not None and wanted else {}
    return [{i: found[i] for i in sorted(ids) if i in found} for ids in named]


def _named_keys(row: ChainRow, envelope_key: Callable[[Any], bytes | None]) -> set[bytes]:
    """The key ids the row's envelopes name, read from their shape as the checker reads them
    (not from the event classes' SEALED, which only the modules imported so far have filled)."""
    try:
        state = json.loads(row.state or b"")
    except ValueError:
        return set()  # a raw state (state_b64): no envelopes the mapper wrote
    if not isinstance(state, dict):
        return set()
    return {i for i in map(envelope_key, state.values()) if i is not None}


def _line(obj: dict[str, Any]) -> bytes:
    return canonical_json(obj) + b"\n"
