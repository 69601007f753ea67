"""Maps pydantic domain events to stored events and back, in a canonical JSON encoding."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from eventsourcing.persistence import (
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    Transcoder,
)

from mindledger.adapters.canonical import SCHEMA_KEY as SCHEMA_KEY
from mindledger.adapters.canonical import canonical_json as canonical_json
from mindledger.adapters.canonical import fast_canonical as fast_canonical
from mindledger.adapters.canonical import has_float as has_float
from mindledger.adapters.canonical import is_canonical as is_canonical
from mindledger.adapters.key_store import KeyStore
from mindledger.adapters.sealing import key_ids, open_state, seal_state
from mindledger.domain.events import FORGOTTEN_MARK, DomainEvent, event_class


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
