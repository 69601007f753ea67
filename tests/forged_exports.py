"""Forging a ledger export as an attacker with a clean clone would: events appended to a real
export, sealed (or not) with keys the forger made, every hash recomputed by the public chain
rule, so the chain verifies and only the checks of what the events say stand in the way."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from uuid import UUID

from mindledger.adapters.canonical import SCHEMA_KEY
from mindledger.adapters.export_form import event_line
from mindledger.adapters.hash_chain import content_hash, link_hash
from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.ledger_export import TIME_KEY, state_bytes
from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.adapters.sealing import seal_state
from mindledger.domain.event_types import known_event_types


def export_lines(path: Path) -> list[dict[str, Any]]:
    """The lines of an export file, decoded (the header first), each event's state shown as
    its fields (`payload`, `time`, `schema`) and `keys` only when it carries some: the shape
    `encoded` writes back as the exporter would."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [lines[0], *map(_decoded, lines[1:])]


def _decoded(line: dict[str, Any]) -> dict[str, Any]:
    event = {k: v for k, v in line.items() if k not in ("state", "keys")}
    if "state" in line:
        payload = dict(line["state"])
        event["time"], event["schema"] = payload.pop(TIME_KEY), payload.pop(SCHEMA_KEY, 1)
        event["payload"] = payload
    if line.get("keys"):
        event["keys"] = line["keys"]
    return event


def encoded(lines: list[dict[str, Any]]) -> bytes:
    """An export file of the lines `export_lines` decodes, written as the exporter writes
    them (no hash recomputed): the header as it is, each event's line from its fields."""
    events = []
    for e in lines[1:]:
        if "payload" in e:
            state = state_bytes(e["payload"], e["time"], e["schema"])
        else:
            state = base64.b64decode(e["state_b64"])
        keys = {bytes.fromhex(i): base64.b64decode(k) for i, k in e.get("keys", {}).items()}
        args = (e["aggregate"], e["topic"], e["version"], state, keys, e["prev"], e["hash"])
        events.append(event_line(e["position"], *args))
    return canonical_json(lines[0]) + b"\n" + b"".join(events)


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
    return encoded([header, *events])
