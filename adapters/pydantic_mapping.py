"""Maps pydantic domain events to stored events and back, in a canonical JSON encoding."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import (
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    Transcoder,
)

from mindledger.adapters.key_store import KeyStore
from mindledger.adapters.sealing import key_ids, open_state, seal_state
from mindledger.domain.events import FORGOTTEN_MARK, DomainEvent, event_class

# Written into a payload only when a class is past schema 1, like the library's `class_version`.
SCHEMA_KEY = "_schema"


# `json.dumps` with these options builds a new encoder on every call (a third of its time
# for an event's small state); one built once encodes the same bytes.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> bytes:
    """One byte string per value: sorted keys, no spaces, UTF-8 (the hash chain hashes these)."""
    return _CANONICAL.encode(value).encode()


_SORTED = orjson.OPT_SORT_KEYS
# orjson spells every float with a fraction or a signed exponent (1.5, 1e+16, 5e-324).
_FLOAT_MARKS = (b".", b"e+", b"e-")
_DIGITS = frozenset(b"0123456789")
_NUMBER = frozenset(b"0123456789eE+-.")


def has_float(line: bytes) -> bool:
    """Whether `line`, were it orjson's spelling of a value, could hold a float: a number with
    a fraction or an exponent where a value starts (after `:`, `,` or `[`) and ends (before
    `,`, `}` or `]`). The same bytes inside a string (a sentence's "1.5,") only send a line
    the slow way; a time's "09:00:00.5+00:00" does not (no value ends there). Looked for
    from its marks, found at C speed: a regular expression over the line took 3x its parse."""
    for mark in _FLOAT_MARKS:
        at = line.find(mark)
        while at != -1:
            if _number_at(line, at):
                return True
            at = line.find(mark, at + 1)
    return False


def _number_at(line: bytes, at: int) -> bool:
    start = at
    while start > 0 and line[start - 1] in _DIGITS:
        start -= 1
    if start == at:
        return False
    if start > 0 and line[start - 1] == 0x2D:  # -
        start -= 1
    if start == 0 or line[start - 1] not in b":,[":
        return False
    end = at + 1
    while end < len(line) and line[end] in _NUMBER:
        end += 1
    return end < len(line) and line[end] in b",}]"


def fast_canonical(value: Any, floatless: bool) -> bytes | None:
    """`canonical_json(value)` by orjson (a fifth of its time), or None where the two could
    differ: orjson spells some floats otherwise (0.00001 for 1e-05), so `floatless` says that
    `value` holds no float; it refuses integers past 64 bits, lone surrogates and deep
    nesting. For every other value the bytes are the same (tests/unit/test_fast_canonical.py).
    """
    if not floatless:
        return None
    try:
        return orjson.dumps(value, option=_SORTED)
    except (TypeError, orjson.JSONEncodeError):
        return None


def is_canonical(value: Any, line: bytes) -> tuple[bool, bool]:
    """Whether `line` is `canonical_json(value)`, `value` being what `line` parses to, and
    whether orjson spelled it so (then `fast_canonical` may encode what `value` holds)."""
    fast = fast_canonical(value, not has_float(line))
    if fast is not None and fast == line:
        return True, True
    try:  # the rule itself decides every other line (a float, NaN, a big integer, an edit)
        return canonical_json(value) == line, False
    except (ValueError, RecursionError):
        return False, False


class CanonicalJSONTranscoder(Transcoder):
    """Plain JSON: pydantic has already turned every value into JSON types."""

    def encode(self, obj: Any) -> bytes:
        return canonical_json(obj)

    def decode(self, data: bytes) -> Any:
        return json.loads(data)


class PydanticMapper(Mapper[UUID]):
    """Stores an event under its explicit TOPIC, its SEALED fields encrypted with `keys`; reads
    it back through opening, upcasting and validation."""

    def __init__(
        self, transcoder: Transcoder | None = None, keys: KeyStore | None = None, **_: Any
    ) -> None:
        super().__init__(transcoder or CanonicalJSONTranscoder())
        self.keys = keys

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        cls = type(domain_event)
        if not isinstance(domain_event, DomainEvent) or not cls.TOPIC:
            raise TypeError(f"{cls.__qualname__} is not a domain event with a TOPIC")
        state = domain_event.model_dump(
            mode="json", exclude={"originator_id", "originator_version"}
        )
        if cls.SCHEMA > 1:
            state[SCHEMA_KEY] = cls.SCHEMA
        if self.keys is not None:
            seal_state(
                cls, domain_event.originator_id, domain_event.originator_version, state, self.keys
            )
        return StoredEvent(
            originator_id=domain_event.originator_id,
            originator_version=domain_event.originator_version,
            topic=cls.TOPIC,
            state=self.transcoder.encode(state),
        )

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        cls = event_class(stored_event.topic)
        if cls is None:
            raise MapperDeserialisationError(
                f"unknown event topic {stored_event.topic!r}; "
                "is this ledger from a newer mindledger?"
            )
        try:
            state = self.transcoder.decode(stored_event.state)
            if self.keys is not None and cls.SEALED:
                wanted = key_ids(stored_event.topic, state).values()
                found = self.keys.get(wanted) if wanted else {}
                open_state(
                    stored_event.topic,
                    stored_event.originator_id,
                    stored_event.originator_version,
                    state,
                    found,
                )
            return _validated(
                cls, stored_event.originator_id, stored_event.originator_version, state
            )
        except (ValueError, KeyError) as e:
            raise _unreadable(
                stored_event.topic, stored_event.originator_id, stored_event.originator_version, e
            ) from e

    def event_of(self, topic: str, originator_id: UUID, version: int, state: dict[str, Any]) -> Any:
        """The event of a state already decoded and opened, as `to_domain_event` reads it
        (`state`'s own fields may be changed; what they hold is not)."""
        cls = event_class(topic)
        if cls is None:
            raise MapperDeserialisationError(f"unknown event topic {topic!r}")
        try:
            return _validated(cls, originator_id, version, state)
        except (ValueError, KeyError) as e:
            raise _unreadable(topic, originator_id, version, e) from e


def _validated(
    cls: type[DomainEvent], originator_id: UUID | str, version: int, state: dict[str, Any]
) -> DomainEvent:
    state.pop(FORGOTTEN_MARK, None)
    state = cls.upcast(state, state.pop(SCHEMA_KEY, 1))
    return cls.model_validate(
        {**state, "originator_id": originator_id, "originator_version": version}
    )


def _unreadable(
    topic: str, originator_id: UUID | str, version: int, error: Exception
) -> MapperDeserialisationError:
    return MapperDeserialisationError(
        f"event {topic} v{version} of {originator_id} cannot be read: {error}"
    )
