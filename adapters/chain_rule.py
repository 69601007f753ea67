"""The hash rule of the chain (adapters/hash_chain.py checks a home's chain with it; an export's
check needs it alone, without the home verifier's result classes: ~1.2 ms of its start).

hash(n) = sha256(hash(n-1) || content(n)), where content(n) = sha256 over the length-prefixed
topic, aggregate id, aggregate version and stored state bytes. hash(0) is the genesis hash over a
random ledger id and creation time, so no two minds share a chain.
"""

from __future__ import annotations

import hashlib

GENESIS_TAG = b"mindledger/genesis/v1"


def genesis_hash(ledger_id: str, created_at: str) -> str:
    """The hash that position 1 links to."""
    return hashlib.sha256(
        GENESIS_TAG + b"\0" + ledger_id.encode() + b"\0" + created_at.encode()
    ).hexdigest()


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def content_hash(topic: str, originator_id: str, version: int | str, state: bytes) -> str:
    """The digest of one event's recorded content."""
    # One sha256 call over the joined fields: the same digest as an update per field, in
    # half the time for an event's few hundred bytes.
    return hashlib.sha256(
        b"".join(
            (
                _field(topic.encode()),
                _field(originator_id.encode()),
                _field(str(version).encode()),
                _field(bytes(state)),
            )
        )
    ).hexdigest()


def link_hash(prev_hash: str, content: str) -> str:
    """The chain hash of an event whose predecessor has `prev_hash`."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + bytes.fromhex(content)).hexdigest()
