"""The events table's payloads without the copies of other events' words: a turn's context and
the prompts it sent (the fields an event seals under its "context" scope) are kept by the ledger
alone, and the row holds `{"$ledger": position}` in their place.

Those copies were 80% of a read model's file (a turn's completed event carries 32-42 KB of
ciphertext), and while a table has fewer than 2,048 rows DuckDB rewrites the column at every
checkpoint; a forget copies the file. A reader that needs them (the web page's turn and event
views, mindledger/web_reads.py) reads the event at that position from the ledger.
"""

from __future__ import annotations

import functools

import orjson

LEDGER_REF = "$ledger"


@functools.cache
def kept_in_ledger(topic: str) -> tuple[str, ...]:
    """The fields events of `topic` seal under the "context" scope (a turn's prompt and
    context); its class found as every reader finds it (`event_class`: imported here, as a
    read that catches nothing up, such as `mind recall` at the head, builds no event class)."""
    from mindledger.domain.events import event_class

    cls = event_class(topic)
    return () if cls is None else tuple(f for f, s in cls.SEALED.items() if s == "context")


def stored_payload(topic: str, position: int, raw: bytes) -> bytes:
    """`raw` (an event's stored state) as the events table keeps it: each field in
    `kept_in_ledger` that holds a value replaced by a reference to `position`."""
    fields = kept_in_ledger(topic)
    if not fields or not raw:
        return raw
    state = orjson.loads(raw)
    held = [f for f in fields if state.get(f) is not None]
    if not held:
        return raw
    for name in held:
        state[name] = {LEDGER_REF: position}
    return orjson.dumps(state, option=orjson.OPT_SORT_KEYS)


def refers_to_ledger(payload: object) -> bool:
    """Whether an events-table payload (as DuckDB returns it) holds a reference to the ledger."""
    if isinstance(payload, bytes | bytearray):
        return LEDGER_REF.encode() in payload
    return isinstance(payload, str) and LEDGER_REF in payload
