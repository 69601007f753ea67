"""`SealedFactory`: what both ledger factories (SQLite, PostgreSQL) add to the library's: one
key store shared by the mapper (which seals) and the recorder (which flushes keys before their
events), the head anchor, and a close that releases the key store too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eventsourcing.persistence import ApplicationRecorder

from mindledger.adapters.head_anchor import HEAD_ANCHOR_ENV, AnchoredRecorder, HeadAnchorFile
from mindledger.adapters.key_store import KeyStore, key_store_from_env
from mindledger.adapters.pydantic_mapping import CanonicalJSONTranscoder, PydanticMapper


class SealedFactory:
    """Mixed in before the library's factory class (`class F(SealedFactory, SQLiteFactory)`)."""

    env: Any
    application_recorder_class: type[Any]
    _keys: KeyStore | None = None
    _keys_read = False

    def key_store(self) -> KeyStore | None:
        """The one key store of this factory's mapper and recorder."""
        if not self._keys_read:
            self._keys, self._keys_read = key_store_from_env(self.env), True
        return self._keys

    def mapper(self, transcoder: Any = None, mapper_class: Any = None) -> Any:
        return PydanticMapper(CanonicalJSONTranscoder(), keys=self.key_store())

    def application_recorder(self) -> ApplicationRecorder:
        recorder: ApplicationRecorder = super().application_recorder()  # type: ignore[misc]
        if isinstance(recorder, self.application_recorder_class):
            recorder.keys = self.key_store()
        anchor = self.env.get(HEAD_ANCHOR_ENV)
        if anchor and isinstance(recorder, AnchoredRecorder):
            recorder.head_anchor = HeadAnchorFile(Path(anchor))
        return recorder

    def close(self) -> None:
        """The library's connections, then the key store's: closed now, not whenever the
        collector reaches them (closing `keys.sqlite`'s last connection checkpoints it)."""
        super().close()  # type: ignore[misc]
        if self._keys is not None:
            self._keys.close()
