"""Sealed event fields: each field an event class names in SEALED is stored as an envelope
`{"$sealed": KEY_ID, "c": base64(nonce || AES-256-GCM ciphertext)}` of its canonical JSON.

The hash chain covers the envelope (the stored bytes), so destroying a key never changes what
`verify` recomputes. The AAD binds a ciphertext to its stream, version, topic and field: one
cannot be moved into another event. A field whose key is gone reads as its placeholder
(`DomainEvent.forgotten_value`); an event whose own key is gone carries FORGOTTEN_MARK.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from uuid import UUID

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from adapters.key_store import KeyStore
from domain import sealed_events  # noqa: F401  (every sealed event type, registered)
from domain.errors import LedgerCorruptError
from domain.events import EVENT_TYPES, FORGOTTEN_MARK, DomainEvent

ENVELOPE = "$sealed"


def _aad(stream: str, version: int, topic: str, field: str) -> bytes:
    return f"{stream}/{version}/{topic}/{field}".encode()


def _stream_hex(originator_id: UUID | str) -> str:
    return originator_id.hex if isinstance(originator_id, UUID) else UUID(str(originator_id)).hex


def seal_state(
    cls: type[DomainEvent], originator_id: UUID, version: int, state: dict[str, Any], keys: KeyStore
) -> None:
    """Replace `state`'s sealed fields (those not None) by envelopes, under a new data key per
    scope; the keys wait in `keys.pending` until the recorder flushes them."""
    if not cls.SEALED:
        return
    stream = _stream_hex(originator_id)
    scoped: dict[str, tuple[bytes, AESGCM]] = {}
    for field, scope in cls.SEALED.items():
        value = state.get(field)
        if value is None:
            continue
        if scope not in scoped:
            key_id, key = keys.new_key()
            scoped[scope] = (key_id, AESGCM(key))
        key_id, cipher = scoped[scope]
        nonce = os.urandom(12)
        plain = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        data = cipher.encrypt(nonce, plain.encode(), _aad(stream, version, cls.TOPIC, field))
        state[field] = {ENVELOPE: key_id.hex(), "c": base64.b64encode(nonce + data).decode()}


def key_ids(topic: str, state: Mapping[str, Any]) -> dict[str, bytes]:
    """The key ids a stored state's envelopes name: field -> key id."""
    cls = EVENT_TYPES.get(topic)
    found: dict[str, bytes] = {}
    if cls is None:
        return found
    for field in cls.SEALED:
        value = state.get(field)
        if isinstance(value, dict) and ENVELOPE in value:
            try:
                found[field] = bytes.fromhex(str(value[ENVELOPE]))
            except ValueError:
                continue
    return found


def open_state(
    topic: str,
    originator_id: UUID | str,
    version: int,
    state: dict[str, Any],
    keys: Mapping[bytes, bytes],
) -> dict[str, Any]:
    """Open `state`'s envelopes in place with `keys` (id -> key); a field whose key is missing
    gets its placeholder, and a missing own-scope key marks the event FORGOTTEN_MARK. Fields
    stored in the clear (events written before sealing) are left as they are."""
    cls = EVENT_TYPES.get(topic)
    if cls is None or not cls.SEALED:
        return state
    stream: str | None = None
    for field, scope in cls.SEALED.items():
        value = state.get(field)
        if not (isinstance(value, dict) and ENVELOPE in value):
            continue
        try:
            key = keys.get(bytes.fromhex(str(value[ENVELOPE])))
        except ValueError:
            key = None
        if key is None:
            state[field] = cls.forgotten_value(field)
            if scope == "own":
                state[FORGOTTEN_MARK] = True
            continue
        stream = stream or _stream_hex(originator_id)
        try:
            raw = base64.b64decode(str(value.get("c", "")))
            plain = AESGCM(key).decrypt(raw[:12], raw[12:], _aad(stream, version, topic, field))
        except (InvalidTag, ValueError) as e:
            raise LedgerCorruptError(
                f"{topic} v{version} of {stream}: its sealed field {field!r} does not open "
                f"with its key ({type(e).__name__}); run `mind verify`"
            ) from None
        state[field] = orjson.loads(plain)
    return state


def open_rows(rows: Sequence[Any], keys: KeyStore | None) -> list[dict[str, Any]]:
    """Each row's state decoded and opened, with one key-store read for the whole batch."""
    states: list[dict[str, Any]] = [orjson.loads(r.state) if r.state else {} for r in rows]
    if keys is None:
        return states
    wanted: list[bytes] = []
    for row, state in zip(rows, states, strict=True):
        if row.topic:
            wanted.extend(key_ids(row.topic, state).values())
    found = keys.get(wanted) if wanted else {}
    for row, state in zip(rows, states, strict=True):
        if row.topic and row.originator_id:
            open_state(row.topic, row.originator_id, row.version or 0, state, found)
    return states


def sealed_keys(rows: Iterable[Any], keys: KeyStore) -> dict[bytes, bytes]:
    """The keys that open these rows (for an export that carries them)."""
    wanted: list[bytes] = []
    for row in rows:
        if row.topic and row.state:
            wanted.extend(key_ids(row.topic, orjson.loads(row.state)).values())
    return keys.get(wanted) if wanted else {}
