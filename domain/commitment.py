"""Commitment: one stream per episode of a promise, identified to users by a short CID."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal
from uuid import UUID

from mindledger.domain.choices import ORIGINS as ORIGINS
from mindledger.domain.errors import CommitmentAlreadyClosedError
from mindledger.domain.events import AggregateRoot, DomainEvent, stream_id
from mindledger.domain.text import clean_text
from mindledger.domain.text_keys import COMMITMENT, TextKeys

Origin = Literal["user", "assistant", "owner", "autonomy"]
TEXT_LIMIT = 4000


def normalise(text: str) -> str:
    """The form two texts share when they are the same promise: case and spacing folded."""
    return " ".join(text.casefold().split()).rstrip(".!;:,")


def commitment_cid(text: str, keys: TextKeys) -> str:
    """A short id stable within this mind, from the normalised text, e.g. `c1a2b3c4d5e`: an
    HMAC under the mind's commitment secret (domain/text_keys.py), so the id, which is in the
    clear everywhere, cannot confirm a guessed promise to someone without the key store.

    40 bits: two different promises share a CID with probability about n^2 / 2^41, 0.5% at
    100,000 commitments; a clash is refused with a clear error rather than merged.
    """
    return "c" + keys.keyed(COMMITMENT, normalise(text))[:10]


def legacy_cid(text: str) -> str:
    """The CID ledgers written before keyed hashes gave the text (sha256): only looked up, so
    a promise opened then is still found when the same text is opened again."""
    return "c" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:10]


def episode_id(cid: str, episode: int) -> UUID:
    """The stream id of a CID's n-th episode; the store's uniqueness makes opening race-free."""
    return stream_id("commitment", cid, str(episode))


class Commitment(AggregateRoot):
    """An episode of a promise: opened with text and origin, closed once with a reason."""

    class Opened(DomainEvent):
        TOPIC = "mind.commitment.opened"
        SEALED = {"text": "own"}
        cid: str
        episode: int
        text: str
        origin: Origin
        thread_id: str | None = None
        concepts: list[str] = []
        # When an imported ledger says it was opened (the event's own time is the import's:
        # the ledger's times only move forward). None: opened when recorded.
        opened_at: datetime | None = None

    class Closed(DomainEvent):
        TOPIC = "mind.commitment.closed"
        SEALED = {"reason": "own"}
        reason: str | None
        evidence: list[int] = []
        # When an imported ledger says it was closed; None: closed when recorded.
        closed_at: datetime | None = None

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.cid = ""
        self.episode = 0
        self.text = ""
        self.origin: str = "user"
        self.thread_id: str | None = None
        self.concepts: list[str] = []
        self.closed = False
        self.close_reason: str | None = None
        self.evidence: list[int] = []

    @classmethod
    def open(
        cls,
        cid: str,
        text: str,
        origin: Origin,
        episode: int,
        at: datetime,
        thread_id: str | None = None,
        concepts: tuple[str, ...] = (),
        since: datetime | None = None,
    ) -> Commitment:
        """Open episode `episode` of the promise `text` under `cid` (`commitment_cid` of the
        text, or the CID an older ledger gave it; `since`: an imported ledger's time)."""
        text = clean_text(text, "commitment text", TEXT_LIMIT, visible=True)
        commitment = cls(episode_id(cid, episode))
        commitment.trigger(
            cls.Opened,
            at,
            cid=cid,
            episode=episode,
            text=text,
            origin=origin,
            thread_id=thread_id,
            concepts=list(concepts),
            opened_at=since,
        )
        return commitment

    def close(
        self,
        reason: str | None,
        evidence: tuple[int, ...],
        at: datetime,
        since: datetime | None = None,
    ) -> None:
        """Close this episode; a closed episode stays closed (`since`: an imported ledger's
        time)."""
        if self.closed:
            raise CommitmentAlreadyClosedError(
                f"commitment {self.cid} is already closed; `mind commitments --all` shows it"
            )
        if reason is not None:
            reason = clean_text(reason, "close reason", 2000)
        self.trigger(self.Closed, at, reason=reason, evidence=list(evidence), closed_at=since)

    def when_Opened(self, e: Opened) -> None:
        self.cid, self.episode, self.text, self.origin = e.cid, e.episode, e.text, e.origin
        self.thread_id, self.concepts = e.thread_id, list(e.concepts)

    def when_Closed(self, e: Closed) -> None:
        self.closed, self.close_reason, self.evidence = True, e.reason, list(e.evidence)
