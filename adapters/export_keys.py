"""The keys an export's event line carries (from version 2), checked as `--deep` and the import
read a line whole: each a 32-byte key in canonical base64 under a 32-hex id, opening every
envelope of its event that names it (AES-GCM's tag), and at least one. Keys are not in the
chain, so a changed key fails here like a changed payload fails the hash."""

from __future__ import annotations

import json
from typing import Any

from mindledger.adapters.canonical import canonical_base64
from mindledger.adapters.ledger_export import KEYS_FIELD
from mindledger.domain.errors import MindError

HEX = frozenset("0123456789abcdef")


class KeyProblem(MindError):
    """Raised when a line's keys fail the check (the reader names its line)."""


def carried_keys(obj: dict[str, Any], state: bytes) -> tuple[dict[bytes, bytes], dict[str, bytes]]:
    """The line's keys, each a 32-byte key under a 32-hex id that opens every envelope of the
    event naming it (and at least one): a key the chain does not cover is still checked. And
    what each envelope holds (the replay check reads it, not opening it again)."""
    # The cipher's modules: the deep check and the import only.
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from mindledger.adapters.sealing import envelope_key, opened_text

    carried = obj[KEYS_FIELD]
    if not isinstance(carried, dict) or not carried:
        raise KeyProblem("keys is not an object of key ids")
    if isinstance(obj.get("payload"), dict):
        decoded: Any = obj["payload"]  # the state's fields but its time (parsed already)
    else:
        try:
            decoded = json.loads(state)
        except ValueError:
            decoded = None
    fields = decoded if isinstance(decoded, dict) else {}
    named: dict[bytes, list[str]] = {}
    for name, value in fields.items():
        key_id = envelope_key(value) if value.__class__ is dict else None  # most are text
        if key_id is not None:
            named.setdefault(key_id, []).append(name)
    keys: dict[bytes, bytes] = {}
    plain: dict[str, bytes] = {}
    for id_hex, text in carried.items():
        if len(id_hex) != 32 or not HEX.issuperset(id_hex):
            raise KeyProblem(f"key id {id_hex[:40]!r} is not 32 hex digits")
        key = _key(text, id_hex)
        key_id = bytes.fromhex(id_hex)
        sealed = named.get(key_id, [])
        if not sealed:
            raise KeyProblem(f"key {id_hex} opens no sealed field of the event")
        cipher = AESGCM(key)  # one for the fields it opens
        for name in sealed:
            opened = opened_text(
                obj["topic"], obj["aggregate"], obj["version"], name, fields[name], cipher
            )
            if opened is None:
                raise KeyProblem(f"key {id_hex} does not open the sealed field {name!r} (changed?)")
            plain[name] = opened
        keys[key_id] = key
    return keys, plain


def _key(text: object, id_hex: str) -> bytes:
    from mindledger.adapters.key_store import KEY_BYTES

    key = canonical_base64(text)
    if key is None or len(key) != KEY_BYTES:
        raise KeyProblem(f"key {id_hex} is not {KEY_BYTES} bytes in base64")
    return key
