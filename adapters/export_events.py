"""What an export's events must be for this version to replay them, checked line by line.

A chain that recomputes proves only that nobody changed the file after it was written; anyone
can write a new file with the public hash rule. So every event is also read the way replay reads
it: its topic must be one this version knows, its payload must decode through the mapper (the
line's keys opening its sealed fields) into its event class (no missing, extra or mistyped
field, no schema newer than the class), its time must be one the read side parses, and each
stream's versions must run 1, 2, 3... with every event of a stream one aggregate's kind. Then
what the domain assumes of its streams (derived ids, one identity, sealed fields sealed, turn
numbers in order: adapters/export_streams.py).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import MapperDeserialisationError
from pydantic import ValidationError

from mindledger.adapters.export_streams import StreamProblem, StreamRules
from mindledger.adapters.pydantic_mapping import SCHEMA_KEY, PydanticMapper
from mindledger.adapters.sealing import open_named
from mindledger.domain.event_types import known_event_types, stream_kind
from mindledger.domain.events import DomainEvent


class EventProblem(ValueError):
    """Raised when an exported event is not one this version can replay (the reason);
    `position` names an earlier event at fault (None: the one being checked)."""

    def __init__(self, reason: str, position: int | None = None) -> None:
        super().__init__(reason)
        self.position = position


class EventRules:
    """The checks of one file's events, in order: each stream's last version and kind."""

    def __init__(self) -> None:
        self.streams: dict[str, tuple[str, int]] = {}  # aggregate hex -> (kind, last version)
        self.types = known_event_types()
        # Keyless: the mapper reads each state already opened (`_decode` opens it once, and
        # the scratch read model takes the same opened state: one decryption, not two).
        self.mapper = PydanticMapper(keys=None)
        self.invariants = StreamRules()
        # Key ids by the line that carries them, and those named by an envelope whose line does
        # not carry them (a forgotten field): an import stores the keys of every line in one
        # key store, so an envelope must never meet another line's key there.
        self.key_lines: dict[bytes, int] = {}
        self.keyless: dict[bytes, int] = {}

    def check(
        self,
        topic: str,
        aggregate: str,
        version: int,
        state: bytes,
        keys: dict[bytes, bytes],
        position: int = 0,
        decoded: dict[str, Any] | None = None,
        plain: dict[str, bytes] | None = None,
    ) -> dict[str, Any]:
        """The event's state opened by the line's keys, as the read side reads it; raise
        EventProblem when this event, following the ones checked before it, is not one this
        version can replay. `decoded`: the state as orjson reads it, when the caller has it
        already (it is not changed); `plain`: what its envelopes hold, opened already by
        their keys in `keys`."""
        cls = self.types.get(topic)
        if cls is None:
            raise EventProblem(
                f"unknown event type {topic[:80]!r}; this mindledger cannot replay it "
                "(an export from a newer version?)"
            )
        stream = _stream(aggregate)
        kind = stream_kind(topic)
        known = self.streams.get(aggregate)
        expected = 1 if known is None else known[1] + 1
        if version != expected:
            raise EventProblem(
                f"{topic} is version {version} of stream {aggregate[:8]}, where {expected} "
                "belongs (events out of stream order)"
            )
        if known is not None and known[0] != kind:
            raise EventProblem(f"a {kind} event in stream {aggregate[:8]} of a {known[0]}")
        event, decoded, opened, named = self._decode(
            cls, stream, version, state, keys, decoded, plain
        )
        self._own_keys(topic, named, keys, position + 1)
        try:
            self.invariants.check(position, kind, stream, event, decoded)
        except StreamProblem as e:
            raise EventProblem(str(e)) from None
        self.streams[aggregate] = (kind, version)
        return opened

    def _own_keys(
        self, topic: str, named: dict[str, bytes], keys: dict[bytes, bytes], line: int
    ) -> None:
        """Each line's keys are its own: no key id on two lines, no envelope under a key id
        that another line carries (earlier or, noted here, later). `named`: the key id each
        envelope of the event names, by field."""
        for key_id in keys:
            other = self.key_lines.get(key_id, self.keyless.get(key_id))
            if other is not None:
                raise EventProblem(
                    f"key {key_id.hex()[:12]} is named by line {other} too: each event's data "
                    "keys are its own (the import keeps every line's keys in one key store)"
                )
            self.key_lines[key_id] = line
        for field, key_id in named.items():
            if key_id in keys:
                continue
            if key_id in self.key_lines:
                raise EventProblem(
                    f"{topic}: field {field!r} is sealed under the key of line "
                    f"{self.key_lines[key_id]}; each event's data keys are its own"
                )
            self.keyless.setdefault(key_id, line)

    def finish(self) -> None:
        """Raise EventProblem (naming the event at fault) for what the file left undone."""
        try:
            self.invariants.finish()
        except StreamProblem as e:
            raise EventProblem(str(e), e.position) from None

    def _decode(
        self,
        cls: type[DomainEvent],
        stream: UUID,
        version: int,
        state: bytes,
        keys: dict[bytes, bytes],
        decoded: dict[str, Any] | None,
        plain: dict[str, bytes] | None,
    ) -> tuple[DomainEvent, dict[str, Any], dict[str, Any], dict[str, bytes]]:
        """The event as the mapper reads it, its state as stored and as opened, and the key id
        each envelope of it names (`sealing.key_ids`)."""
        topic = cls.TOPIC
        if decoded is None:
            try:
                # The read side parses with orjson, which refuses what json.loads lets by
                # (NaN, Infinity, integers past 64 bits, lone surrogates): a state it cannot
                # read would stop every projector at this event.
                decoded = orjson.loads(state)
            except orjson.JSONDecodeError:
                decoded = None
        if not isinstance(decoded, dict):
            raise EventProblem(
                f"{topic}: the stored state is not a JSON object (as the read side parses JSON)"
            )
        schema = decoded.get(SCHEMA_KEY, 1)
        if type(schema) is not int or not 1 <= schema <= cls.SCHEMA:
            raise EventProblem(
                f"{topic}: schema {str(schema)[:20]} where this version reads 1 to {cls.SCHEMA}"
            )
        _time(decoded.get("timestamp"), topic)
        opened = dict(decoded)  # only the line's own keys open its envelopes
        try:
            named = open_named(topic, stream, version, opened, keys, plain)
            # Read from the opened state itself (no new copy: validation changes none of it).
            event = self.mapper.event_of(topic, stream, version, dict(opened))
        except MapperDeserialisationError as e:
            raise EventProblem(f"{topic}: {_reason(e)}") from None
        except Exception as e:  # the mapper's own reading of a hostile payload
            reason = type(e).__name__
            raise EventProblem(f"{topic}: the payload cannot be read ({reason})") from None
        if not isinstance(event, DomainEvent):  # the mapper reads only registered classes
            raise EventProblem(f"{topic}: the payload cannot be read")
        _same_fields(event, decoded, topic)
        return event, decoded, opened, named


def _stream(aggregate: str) -> UUID:
    try:
        stream = UUID(hex=aggregate)
    except ValueError:
        stream = None
    if stream is None or stream.hex != aggregate:
        raise EventProblem("the aggregate is not a UUID in hex")
    return stream


def _time(value: Any, topic: str) -> None:
    """The event's time as the read side parses it (`datetime.fromisoformat`), with a zone."""
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise EventProblem(f"{topic}: the time is not an ISO 8601 time with a zone")


def _same_fields(event: DomainEvent, decoded: dict[str, Any], topic: str) -> None:
    """Every field stored in the clear kept its value through validation (no coercion, so the
    read side, which reads the stored payload, sees what the model accepted)."""
    cls = type(event)
    # The class's own field dict: `model_fields` reaches it through a descriptor that cost
    # as much as the validation it follows.
    fields, sealed = cls.__pydantic_fields__, cls.SEALED
    dumped: dict[str, Any] | None = None
    for name, value in decoded.items():
        if name in sealed or name == "timestamp":
            continue
        if name in fields:
            kept = getattr(event, name)
            if kept.__class__ is value.__class__ and value.__class__ in _PLAIN and kept == value:
                continue  # `_kept`'s usual case without its call: text, a number, a flag, null
            if _kept(kept, value):
                continue
        if dumped is None:
            dumped = event.model_dump(mode="json")
        if name not in dumped:
            continue
        if not _same(dumped[name], value) and not _same_time(dumped[name], value):
            raise EventProblem(f"{topic}: field {name!r} is not of its type")


_PLAIN = frozenset({str, int, bool, type(None)})


def _kept(kept: Any, value: Any) -> bool:
    """Whether a field validated to what it was stored as: text, a whole number, a flag, null
    or a list of them, each of its own type. Such a value dumps as it is (no event class has a
    serializer of its own), so the event need not be dumped for it."""
    if kept.__class__ is not value.__class__:
        return False
    if value.__class__ is list:
        return len(kept) == len(value) and all(
            a.__class__ is b.__class__ and a.__class__ in _PLAIN and a == b
            for a, b in zip(kept, value, strict=True)
        )
    return value.__class__ in _PLAIN and kept == value


def _same(a: Any, b: Any) -> bool:
    if type(a) is type(b) and not isinstance(a, list | dict) and a == b:
        return True  # the usual case: the same text, number or flag
    # bool is an int and 1 == 1.0 in Python (and NaN is not NaN): compare the JSON spellings.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _same_time(a: Any, b: Any) -> bool:
    """Two spellings of one time, both read by the read side's parser."""
    if not (isinstance(a, str) and isinstance(b, str)):
        return False
    try:
        return datetime.fromisoformat(a) == datetime.fromisoformat(b)
    except (ValueError, TypeError):
        return False


def _reason(error: MapperDeserialisationError) -> str:
    """One line for why the mapper refused: the first field at fault and how many more."""
    cause = error.__cause__
    if isinstance(cause, ValidationError):
        problems = cause.errors(include_url=False)
        first = problems[0]
        where = ".".join(str(p) for p in first["loc"]) or "the payload"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        kind = {"missing": "missing", "extra_forbidden": "not a field of this event"}.get(
            first["type"]
        )
        return f"field {where!r}: {kind or first['msg'][:120]}{more}"
    if isinstance(cause, KeyError):
        return f"field {str(cause)[:80]} is missing"
    return "the payload does not decode"
