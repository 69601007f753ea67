"""An export's event line, version 3: the stored state bytes verbatim, in a fixed form a checker
can slice (decision 0028).

    {"aggregate":"A","topic":"T","version":V,"keys":{K},"state":S,"position":N,"prev":"P","hash":"H"}

`S` is the state the chain hashed, byte for byte: every state this code stores is a JSON object
(canonical JSON). A state that is not one, or holds a line break, is carried as
`"state_b64":"..."` instead. `K` is the data keys that still exist for the event's envelopes,
`"<32 hex id>":"<base64 of 32 bytes>"` in id order, or nothing. The strings are spelled by
`canonical_json`. So a line has one spelling; `read_event` accepts exactly that spelling (it
renders the line's fields again and compares the bytes) and is what the import and `verify
--export --deep` read. adapters/export_chain.py checks the usual line without parsing it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from mindledger.adapters.canonical import canonical_base64, canonical_json
from mindledger.adapters.hash_chain import content_hash, link_hash
from mindledger.adapters.import_rules import TOO_DEEP
from mindledger.domain.errors import MindError

HEX = frozenset("0123456789abcdef")
VERBATIM = ("aggregate", "topic", "version", "keys", "state", "position", "prev", "hash")
RAW = ("aggregate", "topic", "version", "keys", "state_b64", "position", "prev", "hash")


class ExportedEvent(NamedTuple):
    """One event line, checked: what a ledger stores for it, and its chain hash. (A tuple:
    built once a line, a frozen dataclass of its fields cost 5x as much.)"""

    position: int
    topic: str
    aggregate: str
    version: int
    state: bytes
    hash: str
    keys: dict[bytes, bytes] = {}  # key id -> data key (read, never changed)
    # What each sealed field's envelope holds, opened by its key in `keys` when it was checked.
    plain: dict[str, bytes] = {}
    # The state as orjson reads it, when the line gave it (None: read it from `state`).
    decoded: dict[str, Any] | None = None


class LineProblem(MindError):
    """Raised when a version 3 event line is not in its form (the reader names its line)."""


def verbatim(state: bytes) -> bool:
    """Whether the line carries `state` as it is: a JSON object (as orjson reads JSON: what
    any reader of the file can parse) on one line."""
    if not (state.startswith(b"{") and state.endswith(b"}")) or b"\n" in state or b"\r" in state:
        return False
    try:
        return orjson.loads(state).__class__ is dict
    except orjson.JSONDecodeError:
        return False


def line_head(aggregate: str, topic: str, version: int, keys: Mapping[bytes, bytes]) -> bytes:
    """What comes before the state: `{"aggregate":...,"keys":{...},`."""
    carried = b",".join(
        b'"%s":"%s"' % (key_id.hex().encode(), base64.b64encode(key))
        for key_id, key in sorted(keys.items())
    )
    return b'{"aggregate":%s,"topic":%s,"version":%s,"keys":{%s},' % (
        _spelled(aggregate),
        _spelled(topic),
        _spelled(version),
        carried,
    )


def _spelled(value: Any) -> bytes:
    """`canonical_json(value)`; a string it would not escape and a whole number without the
    encoder (three calls of it were a tenth of reading a line whole)."""
    if value.__class__ is str and value.isprintable() and '"' not in value and "\\" not in value:
        return b'"%s"' % value.encode()
    if value.__class__ is int:
        return b"%d" % value
    return canonical_json(value)


def line_tail(position: int, prev: str, hash_: str) -> bytes:
    """What comes after the state (without the newline): the fields of fixed width last."""
    return b',"position":%d,"prev":"%s","hash":"%s"}' % (position, prev.encode(), hash_.encode())


def event_line(
    position: int,
    aggregate: str,
    topic: str,
    version: int,
    state: bytes,
    keys: Mapping[bytes, bytes],
    prev: str,
    hash_: str,
) -> bytes:
    """One event's line, with its newline."""
    raw = not verbatim(state)
    body = b'"state_b64":"%s"' % base64.b64encode(state) if raw else b'"state":' + state
    return (
        line_head(aggregate, topic, version, keys) + body + line_tail(position, prev, hash_) + b"\n"
    )


def read_event(line: bytes, position: int, prev: str) -> tuple[ExportedEvent, dict[str, Any]]:
    """The event of a version 3 line (without its newline) that should hold `position`, the line
    before's hash `prev`, its form and hash checked and its keys well formed; and the line's
    object (its keys are tried on the envelopes by the caller: export_check). Raises
    LineProblem saying what is wrong."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise LineProblem("not a JSON line") from None
    except RecursionError:
        raise LineProblem(f"not a JSON line ({TOO_DEEP})") from None
    if obj.__class__ is not dict:
        raise LineProblem("not a JSON object")
    fields = tuple(obj)
    if fields not in (VERBATIM, RAW):
        raise LineProblem(_field_problem(fields))
    aggregate, topic, version = _text(obj, "aggregate"), _text(obj, "topic"), obj["version"]
    if version.__class__ is not int or version < 1:
        raise LineProblem("version is not a positive whole number")
    got = obj["position"]
    if got.__class__ is not int or got < 1:
        raise LineProblem("position is not a positive whole number")
    if got != position:
        raise LineProblem(f"position {got} where {position} belongs")
    if obj["prev"] != prev:
        raise LineProblem("prev is not the hash of the line before")
    hash_ = _digest(obj, "hash")
    keys = _keys(obj["keys"])  # only to spell them again: they are opened by the caller
    head, tail = line_head(aggregate, topic, version, keys), line_tail(position, prev, hash_)
    if not (line.startswith(head) and line.endswith(tail)):
        raise LineProblem("not in the exporter's form (the line was edited)")
    body = line[len(head) : len(line) - len(tail)]
    if "state" in obj:
        state = body[len(b'"state":') :]
        # The line parsed with the state's bytes exactly there: they are one JSON value, the
        # state's; `verbatim` without parsing them again.
        one_line = b"\n" not in state and b"\r" not in state
        framed = state.startswith(b"{") and state.endswith(b"}")
        if not (
            body.startswith(b'"state":') and framed and one_line and obj["state"].__class__ is dict
        ):
            raise LineProblem("the state is not a JSON object on one line (the line was edited)")
    else:
        state = _state_b64(obj["state_b64"])
        if body != b'"state_b64":"%s"' % base64.b64encode(state):
            raise LineProblem("not in the exporter's form (the line was edited)")
    if link_hash(prev, content_hash(topic, aggregate, version, state)) != hash_:
        raise LineProblem("the hash does not recompute (the event was changed)")
    decoded = obj.get("state")  # what orjson reads from `state` (None: carried as base64)
    return ExportedEvent(position, topic, aggregate, version, state, hash_, {}, {}, decoded), obj


def _field_problem(found: tuple[str, ...]) -> str:
    shape = RAW if "state_b64" in found else VERBATIM
    extra, missing = sorted(set(found) - set(shape)), sorted(set(shape) - set(found))
    parts = ([f"unexpected fields {extra}"] if extra else []) + (
        [f"missing fields {missing}"] if missing else []
    )
    return "; ".join(parts) or f"the fields are not in the order {list(shape)}"


def _keys(carried: Any) -> dict[bytes, bytes]:
    """The carried keys, each a 32-hex id and 32 bytes in canonical base64."""
    from mindledger.adapters.key_store import KEY_BYTES  # the cipher's module: a line with keys

    if carried.__class__ is not dict:
        raise LineProblem("keys is not an object of key ids")
    keys: dict[bytes, bytes] = {}
    for id_hex, text in carried.items():
        if len(id_hex) != 32 or not HEX.issuperset(id_hex):
            raise LineProblem(f"key id {id_hex[:40]!r} is not 32 hex digits")
        key = canonical_base64(text)
        if key is None or len(key) != KEY_BYTES:
            raise LineProblem(f"key {id_hex} is not {KEY_BYTES} bytes in base64")
        keys[bytes.fromhex(id_hex)] = key
    return keys


def _state_b64(text: Any) -> bytes:
    state = canonical_base64(text)
    if state is None:
        raise LineProblem("state_b64 is not canonical base64")
    if verbatim(state):
        raise LineProblem("state_b64 holds a JSON object (the exporter writes it as `state`)")
    return state


def _text(obj: dict[str, Any], key: str) -> str:
    value = obj[key]
    if value.__class__ is not str:
        raise LineProblem(f"{key} is not a string")
    return str(value)


def _digest(obj: dict[str, Any], key: str) -> str:
    value = _text(obj, key)
    if len(value) != 64 or not HEX.issuperset(value):
        raise LineProblem(f"{key} is not a sha256 hex digest")
    return value
