"""Keyed hashes of forgettable text (issue 16): the ids and digests derived from what a person
or the model wrote (a commitment's CID, a knowledge item's stream, a PMM source's name, the
embeddings cache's row keys) are HMAC-SHA256 under a per-mind secret, one per purpose, never a
plain sha256: a plain hash of a short sentence is reversed by guessing the sentence.

Residual risk, said plainly: the secrets live in the mind's key store (wrapped by the master
key when one is set). Whoever holds the key store (and the master key) can still confirm a
guessed text against a CID or a stream id, even after the text itself was forgotten; `forget`
deletes the text's keys and purges what it can, it cannot make such an id unguessable to them.
"""

from __future__ import annotations

import hmac
import threading
from typing import Protocol

from mindledger.domain.errors import MindError

# One secret per purpose: an id of one kind never confirms a text of another.
COMMITMENT = "commitment"
KNOWLEDGE = "knowledge"
CONTENT = "content"
IMPORT = "import"
EMBEDDINGS = "embeddings"
PURPOSES = (COMMITMENT, KNOWLEDGE, CONTENT, IMPORT, EMBEDDINGS)


class KeyedHashError(MindError):
    """Raised when a mind without a key store would have to name forgettable text."""


class Secrets(Protocol):
    """Where a mind's named secrets come from: its key store (adapters/key_store.py)."""

    def secret(self, name: str) -> bytes: ...


class TextKeys:
    """HMAC-SHA256 of texts under the mind's secret for each purpose (fetched once, on first
    use: opening a mind reads no secret)."""

    def __init__(self, secrets: Secrets | None) -> None:
        self.secrets = secrets
        self._held: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def keyed(self, purpose: str, text: str) -> str:
        """The hex HMAC-SHA256 of `text` under the secret of `purpose`."""
        return hmac.digest(self._secret(purpose), text.encode("utf-8"), "sha256").hex()

    def make_all(self) -> None:
        """Make every purpose's secret now (`init`): a copy of the home made after it, a
        backup or a twin, then names every text as the original does, and a read-only home
        finds its secrets."""
        for purpose in PURPOSES:
            self._secret(purpose)

    def _secret(self, purpose: str) -> bytes:
        with self._lock:
            held = self._held.get(purpose)
            if held is None:
                if self.secrets is None:
                    raise KeyedHashError(
                        "this mind has no key store, so it cannot name what was written "
                        "(commitment ids, knowledge items, imports); open it through its home"
                    )
                held = self._held[purpose] = self.secrets.secret(purpose)
            return held
