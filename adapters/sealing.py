"""Sealed event fields: each field an event class names in SEALED is stored as an envelope
`{"$sealed": KEY_ID, "c": base64(nonce || AES-256-GCM ciphertext)}` of its canonical JSON.

The hash chain covers the envelope (the stored bytes), so destroying a key never changes what
`verify` recomputes. The AAD binds a ciphertext to its stream, version, topic and field: one
cannot be moved into another event. A field whose key is gone reads as its placeholder
(`DomainEvent.forgotten_value`); an event whose own key is gone carries FORGOTTEN_MARK.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from binascii import a2b_base64
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from uuid import UUID

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from orjson import loads

from mindledger.adapters.key_store import ID_BYTES, KeyStore
from mindledger.domain.errors import LedgerCorruptError
from mindledger.domain.events import FORGOTTEN_MARK, DomainEvent, event_class

ENVELOPE = "$sealed"


def _aad(stream: str, version: int, topic: str, field: str) -> bytes:
    return f"{stream}/{version}/{topic}/{field}".encode()


def _stream_hex(originator_id: UUID | str) -> str:
    if isinstance(originator_id, UUID):
        return originator_id.hex
    text = str(originator_id)
    # SQLite rows hold the id as its 32 hex digits: skip UUID's parse (a quarter of opening
    # an event). A malformed one then fails to open, as corrupt, like any other changed byte.
    return text.lower() if len(text) == 32 else UUID(text).hex


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
        data = cipher.encrypt(nonce, plain_json(value), _aad(stream, version, cls.TOPIC, field))
        state[field] = {ENVELOPE: key_id.hex(), "c": base64.b64encode(nonce + data).decode()}


def plain_json(value: Any) -> bytes:
    """A field's JSON as sealed: only ever parsed back (`orjson.loads`; the chain hashes the
    envelope), so any spelling of the same value will do. orjson's where it spells it (a
    turn's context, ~28 KB: ~0.3 ms by `json.dumps` with sorted keys, a tenth of that by
    orjson), json's where orjson refuses (integers past 64 bits, keys that are not text, deep
    nesting). The values are a model's JSON dump: no float in them is NaN or infinite (which
    orjson would write as null)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text.encode()


def _key_id(envelope: Mapping[str, Any]) -> bytes | None:
    try:
        return bytes.fromhex(str(envelope[ENVELOPE]))
    except ValueError:
        return None


def key_ids(topic: str, state: Mapping[str, Any]) -> dict[str, bytes]:
    """The key ids a stored state's envelopes name: field -> key id."""
    cls = event_class(topic)
    found: dict[str, bytes] = {}
    if cls is None:
        return found
    for field, _, _, key_id in _envelopes(cls, state):
        if key_id is not None:
            found[field] = key_id
    return found


# (field, scope, envelope, key id or None when the envelope names none that parses)
_Sealed = tuple[str, str, Mapping[str, Any], bytes | None]


def _envelopes(cls: type[DomainEvent], state: Mapping[str, Any]) -> list[_Sealed]:
    found: list[_Sealed] = []
    for field, scope in cls.SEALED.items():
        value = state.get(field)
        if isinstance(value, dict) and ENVELOPE in value:
            found.append((field, scope, value, _key_id(value)))
    return found


def open_state(
    topic: str,
    originator_id: UUID | str,
    version: int,
    state: dict[str, Any],
    keys: Mapping[bytes, bytes],
    plain: Mapping[str, bytes] | None = None,
) -> dict[str, Any]:
    """Open `state`'s envelopes in place with `keys` (id -> key); a field whose key is missing
    gets its placeholder, and a missing own-scope key marks the event FORGOTTEN_MARK. Fields
    stored in the clear (events written before sealing) are left as they are. `plain`: what
    some envelopes were already found to hold with their key in `keys` (`opened_text`)."""
    cls = event_class(topic)
    if cls is None or not cls.SEALED:
        return state
    _open(cls, topic, originator_id, version, state, _envelopes(cls, state), keys, plain)
    return state


def open_named(
    topic: str,
    originator_id: UUID | str,
    version: int,
    state: dict[str, Any],
    keys: Mapping[bytes, bytes],
    plain: Mapping[str, bytes] | None = None,
) -> dict[str, bytes]:
    """`open_state`, and what `key_ids` gives for `state` as it was before (field -> key id),
    from one look at its envelopes (an export's check needs both of every event)."""
    cls = event_class(topic)
    if cls is None or not cls.SEALED:
        return {}
    sealed = _envelopes(cls, state)
    _open(cls, topic, originator_id, version, state, sealed, keys, plain)
    return {field: key_id for field, _, _, key_id in sealed if key_id is not None}


def _open(
    cls: type[DomainEvent],
    topic: str,
    originator_id: UUID | str,
    version: int,
    state: dict[str, Any],
    sealed: list[_Sealed],
    keys: Mapping[bytes, bytes],
    opened: Mapping[str, bytes] | None = None,
) -> None:
    stream: str | None = None
    for field, scope, envelope, key_id in sealed:
        key = None if key_id is None else keys.get(key_id)
        if key is None:
            state[field] = cls.forgotten_value(field)
            if scope == "own":
                state[FORGOTTEN_MARK] = True
            continue
        if opened is not None and field in opened:  # opened with this key already
            state[field] = orjson.loads(opened[field])
            continue
        stream = stream or _stream_hex(originator_id)
        try:
            # a2b_base64 is what b64decode calls, without its wrapper (a fifth of its time)
            raw = binascii.a2b_base64(str(envelope.get("c", "")))
            plain = AESGCM(key).decrypt(raw[:12], raw[12:], _aad(stream, version, topic, field))
        except (InvalidTag, ValueError) as e:
            # Not the chain (`mind verify` checks that, and passes): the key store holds a
            # different key under this id than the one that sealed the field.
            raise LedgerCorruptError(
                f"{topic} v{version} of {stream}: its sealed field {field!r} does not open "
                f"with key {(key_id or b'').hex()} from the key store ({type(e).__name__}): "
                "the key store does not match the ledger (a key store of another copy of this "
                "home, or a changed one); restore it from a backup of this home, and `mind doctor` "
                "checks every sealed field against it"
            ) from None
        state[field] = orjson.loads(plain)


def _plan(topic: str | None, skip: frozenset[str]) -> tuple[type[DomainEvent], Any] | None:
    """A topic's event class and the (field, scope) pairs a batch opens (None: none)."""
    cls = event_class(topic) if topic else None
    if cls is None or not cls.SEALED:
        return None
    fields = tuple((f, scope) for f, scope in cls.SEALED.items() if f not in skip)
    return (cls, fields) if fields else None


def open_rows(
    rows: Sequence[Any], keys: KeyStore | None, skip: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """Each row's state decoded and opened, with at most one key-store read for the whole
    batch; the fields named in `skip` stay sealed (a reader that never looks at them).

    A catch-up opens every event of a batch here: the event class and sealed fields are looked
    up once per topic, not per event, and a field's key opens it directly (a third of the
    catch-up went to opening fields one event at a time, through general helpers). Once the
    store holds its scan (`KeyStore.at_hand`), each event opens as it is read, in one pass."""
    loads = orjson.loads
    states: list[dict[str, Any]] = [loads(r.state) if r.state else {} for r in rows]
    if keys is None:
        return states
    at_hand = keys.at_hand()
    plans: dict[str | None, tuple[type[DomainEvent], Any] | None] = {}
    later: list[tuple[Any, dict[str, Any], type[DomainEvent], list[_Sealed]]] = []
    fromhex = bytes.fromhex
    for row, state in zip(rows, states, strict=True):
        topic = row.topic
        try:
            plan = plans[topic]
        except KeyError:
            plan = plans[topic] = _plan(topic, skip)
        if plan is None:
            continue
        cls, fields = plan
        sealed: list[_Sealed] = []
        for field, scope in fields:
            value = state.get(field)
            if value.__class__ is dict and ENVELOPE in value:
                named = value[ENVELOPE]
                try:  # `_key_id` inline: two calls a field were a tenth of opening
                    key_id: bytes | None = fromhex(named)
                except (TypeError, ValueError):
                    key_id = _key_id(value)
                sealed.append((field, scope, value, key_id))
        if sealed and row.originator_id and not (at_hand and _opened(row, state, sealed, at_hand)):
            later.append((row, state, cls, sealed))
    if later:
        # The keys not at hand (a batch before the store's scan, keys stored since it, keys
        # destroyed): one read for them all. A key still missing (a forgotten field) or any
        # other failure sends the event to `_open`, which gives a forgotten field its
        # placeholder and the event's mark, and words any other failure.
        keyring = keys.get(k for *_, sealed in later for *_, k in sealed if k is not None)
        for row, state, cls, sealed in later:
            if not _opened(row, state, sealed, keyring):
                _open(cls, row.topic, row.originator_id, row.version or 0, state, sealed, keyring)
    return states


_NO_KEY = object()


def _opened(
    row: Any, state: dict[str, Any], sealed: list[_Sealed], keyring: Mapping[bytes, bytes]
) -> bool:
    """Whether `state`'s sealed fields all opened with `keyring` (nearly every event), without
    `_open`'s checks per field; on any failure (a key missing from `keyring` too) the fields
    are left sealed as they were, for `_open`."""
    stream, topic = row.originator_id, row.topic
    if stream.__class__ is not str or len(stream) != 32 or not stream.islower():
        stream = _stream_hex(stream)  # what SQLite rows hold needs no conversion
    prefix = f"{stream}/{row.version or 0}/{topic}/"
    cipher: AESGCM | None = None
    # No key id yet: the first field's key, whatever it names (None or b"" too), is looked up
    # in `keyring`, and one that is not there fails the event.
    last: object = _NO_KEY
    try:
        for field, _, envelope, key_id in sealed:
            if key_id != last:  # a scope's fields share their key
                cipher, last = AESGCM(keyring[key_id]), key_id  # type: ignore[index]
            raw = a2b_base64(envelope["c"])
            plain = cipher.decrypt(raw[:12], raw[12:], (prefix + field).encode())  # type: ignore[union-attr]
            state[field] = loads(plain)
    except (InvalidTag, ValueError, KeyError, TypeError):
        state.update((field, envelope) for field, _, envelope, _ in sealed)
        return False
    return True


def sealed_keys(rows: Iterable[Any], keys: KeyStore) -> dict[bytes, bytes]:
    """The keys that open these rows (for an export that carries them)."""
    wanted: list[bytes] = []
    for row in rows:
        if row.topic and row.state:
            wanted.extend(key_ids(row.topic, orjson.loads(row.state)).values())
    return keys.get(wanted) if wanted else {}


def envelope_key(value: Any) -> bytes | None:
    """The key id `value` names when it is an envelope (exactly its two fields), else None.

    Reads the shape alone, without the event classes: an export is checked by code that may
    not know every topic in it (adapters/export_check.py)."""
    if not (isinstance(value, dict) and value.keys() == {ENVELOPE, "c"}):
        return None
    named = value[ENVELOPE]
    if not isinstance(named, str) or len(named) != 2 * ID_BYTES:
        return None
    try:
        return bytes.fromhex(named)
    except ValueError:
        return None


def opened_text(
    topic: str, originator_id: UUID | str, version: int, field: str, value: Any, key: bytes | AESGCM
) -> bytes | None:
    """What this field's envelope holds when `key` opens it (its AES-GCM tag checks under the
    field's AAD; `key` may be a cipher made of it), else None."""
    try:
        raw = base64.b64decode(str(value["c"]), validate=True)
        aad = _aad(_stream_hex(originator_id), version, topic, field)
        cipher = key if isinstance(key, AESGCM) else AESGCM(key)
        return cipher.decrypt(raw[:12], raw[12:], aad)
    except (InvalidTag, ValueError, KeyError, TypeError):
        return None
