"""A key store read as if some of its keys were already destroyed.

A forget builds its new read model aside while turns go on (`mindledger.forget_aside`): the
events it will reach must project then as they will once their keys are gone ("[forgotten]",
unindexed), so the aside's reader opens sealed fields through this view, which hides them.
"""

from __future__ import annotations

from collections.abc import Iterable

from mindledger.adapters.key_store import KeyStore


class MaskedKeys(KeyStore):
    """`keys`, read-only, without `masked`; closing it closes `keys`."""

    def __init__(self, keys: KeyStore, masked: Iterable[bytes]) -> None:
        super().__init__()
        self.keys = keys
        self.masked = frozenset(masked)

    def get(self, ids: Iterable[bytes]) -> dict[bytes, bytes]:
        """The keys that exist among `ids` and are not masked."""
        return self.keys.get(i for i in ids if i not in self.masked)

    def close(self) -> None:
        """Release the store underneath."""
        self.keys.close()
