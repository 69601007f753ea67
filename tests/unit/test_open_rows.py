"""A catch-up's batch opening (`sealing.open_rows`): every field it can open, the placeholder
and the event's mark for a field whose key is gone, and no failure for an envelope naming a key
that cannot exist."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import orjson

from mindledger.adapters.hash_chain import ChainRow
from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.sealing import ENVELOPE, open_rows, seal_state
from mindledger.domain.conversation import Conversation
from mindledger.domain.events import FORGOTTEN, FORGOTTEN_MARK

STREAM = UUID("0f0e0d0c-0b0a-0908-0706-050403020100")
OBSERVED = Conversation.MessageObserved
MESSAGE = {"speaker": "Caroline", "text": "The boiler code is 4471", "source_id": "m-7"}


def sealed_row(keys: MemoryKeyStore, version: int = 3) -> tuple[ChainRow, dict[str, Any]]:
    state: dict[str, Any] = {**MESSAGE, "caption": None, "timestamp": "2026-12-04T10:00:00+00:00"}
    seal_state(OBSERVED, STREAM, version, state, keys)
    keys.flush()
    row = ChainRow(version, "c", "h", OBSERVED.TOPIC, STREAM.hex, version, orjson.dumps(state))
    return row, state


def test_a_batch_opens_every_sealed_field_with_its_key() -> None:
    keys = MemoryKeyStore()
    row, _ = sealed_row(keys)

    (opened,) = open_rows([row], keys)

    assert {k: opened[k] for k in MESSAGE} == MESSAGE
    assert FORGOTTEN_MARK not in opened


def test_a_field_whose_key_is_gone_reads_as_forgotten_and_marks_the_event() -> None:
    keys = MemoryKeyStore()
    kept, _ = sealed_row(keys, version=1)
    gone, state = sealed_row(keys, version=2)
    keys.destroy([bytes.fromhex(state["text"][ENVELOPE])], "forget-1", "plan")

    first, second = open_rows([kept, gone], keys)

    assert first["text"] == MESSAGE["text"]
    assert (second["text"], second["source_id"], second[FORGOTTEN_MARK]) == (
        FORGOTTEN,
        FORGOTTEN,
        True,
    )


def test_an_envelope_naming_an_empty_or_unreadable_key_reads_as_forgotten() -> None:
    keys = MemoryKeyStore()
    empty, empty_state = sealed_row(keys, version=1)
    garbled, garbled_state = sealed_row(keys, version=2)
    empty_state["text"][ENVELOPE] = ""
    garbled_state["text"][ENVELOPE] = "not hex"
    rows = [
        empty._replace(state=orjson.dumps(empty_state)),
        garbled._replace(state=orjson.dumps(garbled_state)),
    ]

    opened = open_rows(rows, keys)

    assert [(o["text"], o["source_id"], o[FORGOTTEN_MARK]) for o in opened] == [
        (FORGOTTEN, MESSAGE["source_id"], True),
        (FORGOTTEN, MESSAGE["source_id"], True),
    ]
