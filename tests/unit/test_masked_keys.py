"""A forget's aside read model reads the ledger through a key store that hides the keys the
forget will destroy: those read as destroyed, every other key as it is."""

from __future__ import annotations

import sys

import pytest

from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.masked_keys import MaskedKeys
from mindledger.memory_release import _glibc


def test_masked_keys_read_as_destroyed_and_the_rest_as_stored() -> None:
    store = MemoryKeyStore()
    doomed, kept = store.new_key(), store.new_key()
    store.flush()

    view = MaskedKeys(store, {doomed[0]})

    assert view.get([doomed[0], kept[0]]) == {kept[0]: kept[1]}
    assert store.get([doomed[0]]) == {doomed[0]: doomed[1]}  # nothing is destroyed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_a_server_can_reach_the_allocator_it_hands_freed_memory_back_to() -> None:
    lib = _glibc()

    assert lib is not None
    assert lib.malloc_trim(0) in (0, 1)  # 1: memory was released, 0: there was none to
