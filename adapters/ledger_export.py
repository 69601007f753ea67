"""The ledger as a self-verifying JSON Lines file: a header with the genesis, then one event a line.

Every line is the canonical JSON (`canonical_json`) of one object, so a line has exactly one
spelling and any changed byte is caught (adapters/export_check.py). An event line carries what
its chain hash is computed over: the topic, aggregate id, aggregate version and the stored state
bytes. The state is canonical JSON of {payload..., "timestamp": time, "_schema": schema (> 1
only)}, so the line shows it decoded (`time`, `schema`, `payload`) and the checker rebuilds the
exact bytes; a state that does not rebuild byte for byte (none written by this code) is carried
as `state_b64` instead.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from adapters.hash_chain import ChainRow
from adapters.pydantic_mapping import SCHEMA_KEY, canonical_json

FORMAT = "mindledger-export"
FORMAT_VERSION = 1
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


@dataclass(frozen=True)
class Genesis:
    """What a ledger's chain starts from."""

    ledger_id: str
    created_at: str
    genesis: str


def header_line(genesis: Genesis, events: int, head: str | None) -> bytes:
    """The first line: the genesis, how many events follow and the hash of the last."""
    return _line(
        {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "hash_rule": HASH_RULE,
            "ledger_id": genesis.ledger_id,
            "created_at": genesis.created_at,
            "genesis": genesis.genesis,
            "events": events,
            "head": head or genesis.genesis,
        }
    )


def state_bytes(payload: dict[str, Any], time: str, schema: int) -> bytes:
    """The stored state an event line's decoded fields stand for (what the chain hashed)."""
    state = {**payload, TIME_KEY: time}
    if schema > 1:
        state[SCHEMA_KEY] = schema
    return canonical_json(state)


def render_state(state: bytes) -> dict[str, Any]:
    """An event's stored state as export fields: decoded when that rebuilds the same bytes.

    The one place an event's payload is rendered for export (the seam where forgetting, issue
    16, will show a destroyed text as "[forgotten]")."""
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


def event_line(row: ChainRow, prev: str) -> bytes:
    """One event's line; `prev` is the hash of the line before (the genesis for the first)."""
    state = row.state if isinstance(row.state, bytes | bytearray | memoryview) else b""
    return _line(
        {
            "position": row.position,
            "topic": row.topic,
            "aggregate": row.originator_id,
            "version": row.version,
            **render_state(bytes(state)),
            "hash": row.hash,
            "prev": prev,
        }
    )


def export_lines(
    genesis: Genesis, rows: Iterable[ChainRow], events: int, head: str | None
) -> Iterator[bytes]:
    """The whole file, line by line: the header, then each of the `events` rows."""
    yield header_line(genesis, events, head)
    prev = genesis.genesis
    for row in rows:
        yield event_line(row, prev)
        prev = row.hash


def _line(obj: dict[str, Any]) -> bytes:
    return canonical_json(obj) + b"\n"
