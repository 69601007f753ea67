"""An export's usual event line checked in one pass (`mind verify --export`, `import ledger`).

Nearly every line of an export is the exporter's own: canonical JSON with no float, a payload,
its keys opening its envelopes. `usual_event` checks such a line as adapters/export_check.py's
`_event` does, inline in one function (the general path calls ~40 functions a line, a third of
the line's check), and gives up (None) at anything else: a line it does not accept goes to
`_event`, which accepts it or names what is wrong. So it never accepts what `_event` refuses,
and every refusal keeps `_event`'s words (tests/unit/test_export_lines.py holds the two alike).
"""

from __future__ import annotations

import hashlib
from binascii import a2b_base64, b2a_base64
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from orjson import OPT_SORT_KEYS, JSONDecodeError, JSONEncodeError, dumps, loads

from mindledger.adapters.canonical import SCHEMA_KEY, has_float
from mindledger.adapters.export_form import ExportedEvent
from mindledger.adapters.key_store import ID_BYTES, KEY_BYTES
from mindledger.adapters.ledger_export import EVENT_KEYS, KEYS_FIELD, TIME_KEY
from mindledger.adapters.sealing import ENVELOPE

HEX = frozenset("0123456789abcdef")
# A payload line's fields in canonical (sorted) order, without and with its keys.
PLAIN_FIELDS = tuple(sorted(EVENT_KEYS))
KEYED_FIELDS = tuple(sorted(EVENT_KEYS | {KEYS_FIELD}))
ENVELOPE_FIELDS = frozenset({ENVELOPE, "c"})


def usual_event(line: bytes, number: int, prev: str, keyed: bool) -> ExportedEvent | None:
    """The event of line `number` (its predecessor's hash `prev`; `keyed`: the file's lines
    may carry keys) when it is a usual line `_event` accepts, as `_event` reads it; else None."""
    try:
        obj = loads(line)
    except JSONDecodeError:
        return None
    if obj.__class__ is not dict:
        return None
    fields = tuple(obj)
    if fields != PLAIN_FIELDS and not (keyed and fields == KEYED_FIELDS):
        return None
    # Canonical: orjson spells a floatless value as the rule does (pydantic_mapping.is_canonical).
    # Only the payload can hold a float in a line taken here (every other field is checked
    # below to be text, whole numbers or keys), so only its bytes are searched (from the
    # first `,"payload":`, which strings before it cannot spell, to the last `,"position":`,
    # which no field after it can): the topic's dots sent every line to `has_float`'s
    # slower path.
    if dumps(obj, option=OPT_SORT_KEYS) != line:
        return None
    if has_float(line[line.find(b',"payload":') : line.rfind(b',"position":')]):
        return None
    position, topic, aggregate = obj["position"], obj["topic"], obj["aggregate"]
    version, payload, time, schema = obj["version"], obj["payload"], obj["time"], obj["schema"]
    if not (
        position.__class__ is int
        and position == number - 1
        and topic.__class__ is str
        and aggregate.__class__ is str
        and len(aggregate) == 32  # its envelopes' AAD spells it lowered (sealing._stream_hex)
        and version.__class__ is int
        and version >= 1
        and payload.__class__ is dict
        and time.__class__ is str
        and schema.__class__ is int
        and schema >= 1
        and obj["prev"] == prev
    ):
        return None
    value = {**payload, TIME_KEY: time}  # ledger_export.state_of
    if schema > 1:
        value[SCHEMA_KEY] = schema
    try:
        state = dumps(value, option=OPT_SORT_KEYS)
    except (TypeError, JSONEncodeError):
        return None
    t, a, v = topic.encode(), aggregate.encode(), str(version).encode()
    content = hashlib.sha256(  # hash_chain.content_hash, then link_hash
        b"".join(
            (
                *(len(t).to_bytes(8, "big"), t, len(a).to_bytes(8, "big"), a),
                *(len(v).to_bytes(8, "big"), v, len(state).to_bytes(8, "big"), state),
            )
        )
    ).digest()
    expected = hashlib.sha256(bytes.fromhex(prev) + content).hexdigest()
    if obj["hash"] != expected:
        return None
    if KEYS_FIELD not in obj:
        return ExportedEvent(position, topic, aggregate, version, state, expected, {}, {}, value)
    done = opened(obj[KEYS_FIELD], payload, f"{aggregate.lower()}/{version}/{topic}/")
    if done is None:
        return None
    keys, plain = done
    return ExportedEvent(position, topic, aggregate, version, state, expected, keys, plain, value)


def opened(
    carried: Any, payload: dict[str, Any], aad: str
) -> tuple[dict[bytes, bytes], dict[str, bytes]] | None:
    """export_check._keys (also for a version 3 line, read whole) for a line whose every key
    is well formed and opens the envelopes that name it (`aad`: their AAD but the field's
    name); else None."""
    if carried.__class__ is not dict or not carried:
        return None
    fromhex = bytes.fromhex
    named: dict[bytes, list[str]] = {}
    for name, field in payload.items():  # sealing.envelope_key of each field
        if field.__class__ is dict and field.keys() == ENVELOPE_FIELDS:
            id_hex = field[ENVELOPE]
            if id_hex.__class__ is str and len(id_hex) == 2 * ID_BYTES:
                try:  # noqa: SIM105 (a `with` block per envelope costs more)
                    named.setdefault(fromhex(id_hex), []).append(name)
                except ValueError:
                    pass
    keys: dict[bytes, bytes] = {}
    plain: dict[str, bytes] = {}
    try:
        for id_hex, text in carried.items():
            if len(id_hex) != 2 * ID_BYTES or not HEX.issuperset(id_hex):
                return None
            if text.__class__ is not str:
                return None
            key = a2b_base64(text, strict_mode=True)  # base64.b64decode(validate=True)
            if len(key) != KEY_BYTES or b2a_base64(key, newline=False).decode() != text:
                return None
            key_id = fromhex(id_hex)
            sealed = named.get(key_id)
            if not sealed:
                return None
            cipher = AESGCM(key)
            for name in sealed:  # sealing.opened_text
                c = payload[name]["c"]
                if c.__class__ is not str:
                    return None
                raw = a2b_base64(c, strict_mode=True)
                plain[name] = cipher.decrypt(raw[:12], raw[12:], (aad + name).encode())
            keys[key_id] = key
    except (InvalidTag, ValueError):  # binascii.Error is a ValueError
        return None
    return keys, plain
