"""A catch-up's batch opening (`sealing.open_rows`): every field it can open, the placeholder
and the event's mark for a field whose key is gone, and no failure for an envelope naming a key
that cannot exist; from a store's scan (`KeyStore.at_hand`) as from its reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
import pytest

from mindledger.adapters import key_store
from mindledger.adapters.hash_chain import ChainRow
from mindledger.adapters.key_store import KeyStore, MemoryKeyStore, SQLiteKeyStore
from mindledger.adapters.masked_keys import MaskedKeys
from mindledger.adapters.sealing import ENVELOPE, open_rows, seal_state
from mindledger.domain.conversation import Conversation
from mindledger.domain.events import FORGOTTEN, FORGOTTEN_MARK

STREAM = UUID("0f0e0d0c-0b0a-0908-0706-050403020100")
OBSERVED = Conversation.MessageObserved
MESSAGE = {"speaker": "Caroline", "text": "The boiler code is 4471", "source_id": "m-7"}


def sealed_row(keys: KeyStore, version: int = 3) -> tuple[ChainRow, dict[str, Any]]:
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


@pytest.fixture
def scanning_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SQLiteKeyStore:
    """A key store file that reads itself whole for any batch (as for a catch-up's 25,000)."""
    monkeypatch.setattr(key_store, "BULK", 1)
    return SQLiteKeyStore(tmp_path / "keys.sqlite")


def test_a_batch_opened_from_the_store_scan_reads_as_one_opened_by_reading_the_store(
    scanning_store: SQLiteKeyStore,
) -> None:
    rows = [sealed_row(scanning_store, version=v)[0] for v in (1, 2, 3)]

    first = open_rows(rows[:2], scanning_store)  # reads the store, which keeps its scan
    at_hand = len(scanning_store.at_hand())
    second = open_rows(rows, scanning_store)  # opens from the scan

    assert at_hand == 3
    assert second[:2] == first
    assert [s["text"] for s in second] == [MESSAGE["text"]] * 3


def test_a_key_destroyed_or_masked_after_the_scan_is_not_opened_from_it(
    scanning_store: SQLiteKeyStore,
) -> None:
    destroyed, destroyed_state = sealed_row(scanning_store, version=1)
    masked, masked_state = sealed_row(scanning_store, version=2)
    open_rows([destroyed, masked], scanning_store)
    scanning_store.destroy([bytes.fromhex(destroyed_state["text"][ENVELOPE])], "f-1", "plan")
    view = MaskedKeys(scanning_store, [bytes.fromhex(masked_state["text"][ENVELOPE])])
    open_rows([masked], scanning_store)  # the store scanned again, the masked key in it

    through_store = open_rows([destroyed, masked], scanning_store)
    through_view = open_rows([destroyed, masked], view)

    assert [s["text"] for s in through_store] == [FORGOTTEN, MESSAGE["text"]]
    assert [s["text"] for s in through_view] == [FORGOTTEN, FORGOTTEN]
    assert all(s[FORGOTTEN_MARK] for s in through_view)
