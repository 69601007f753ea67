"""Forging a ledger export as an attacker with a clean clone would: events appended to a real
export, sealed (or not) with keys the forger made, every hash recomputed by the public chain
rule, so the chain verifies and only the checks of what the events say stand in the way."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from uuid import UUID

from mindledger.adapters.hash_chain import content_hash, link_hash
from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.ledger_export import state_bytes
from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.adapters.sealing import seal_state
from mindledger.domain.event_types import known_event_types


def export_lines(path: Path) -> list[dict[str, Any]]:
    """The lines of an export file, decoded (the header first)."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def sealed(event: dict[str, Any]) -> dict[str, Any]:
    """`event` (topic, aggregate, version, payload in the clear) with its sealed fields sealed
    under fresh keys, which the line carries, as the exporting mind's would be."""
    cls = known_event_types()[event["topic"]]
    payload, keys = dict(event["payload"]), MemoryKeyStore()
    seal_state(cls, UUID(hex=event["aggregate"]), event["version"], payload, keys)
    carried = {i.hex(): base64.b64encode(k).decode() for i, k in keys.pending.items()}
    return {**event, "payload": payload, **({"keys": carried} if carried else {})}


def forge(lines: list[dict[str, Any]], *added: dict[str, Any]) -> bytes:
    """The export with `added` events appended (topic, aggregate, version, time, payload and
    optional keys), every position, prev, hash and the header recomputed."""
    header, events = dict(lines[0]), [dict(e) for e in lines[1:]]
    prev = events[-1]["hash"]
    for event in added:
        line = {**event, "position": len(events) + 1, "prev": prev, "schema": 1}
        state = state_bytes(line["payload"], line["time"], 1)
        line["hash"] = prev = link_hash(
            prev, content_hash(line["topic"], line["aggregate"], line["version"], state)
        )
        events.append(line)
    header.update(events=len(events), head=prev)
    return b"".join(canonical_json(o) + b"\n" for o in [header, *events])
