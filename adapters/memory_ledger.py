"""In-memory persistence for unit tests: the library's POPO recorder with our pydantic mapper.

It keeps no hash chain; the chain is tested against the SQLite and PostgreSQL recorders.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.popo import POPOFactory

from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.pydantic_mapping import CanonicalJSONTranscoder, PydanticMapper

MEMORY_ENV = {"PERSISTENCE_MODULE": "mindledger.adapters.memory_ledger:MemoryFactory"}


class MemoryFactory(POPOFactory):
    """POPO recorders, our mapper."""

    def mapper(self, transcoder: Any = None, mapper_class: Any = None) -> Any:
        # Sealed like every ledger, keys in memory: unit tests read through the same opening.
        return PydanticMapper(CanonicalJSONTranscoder(), keys=MemoryKeyStore())
