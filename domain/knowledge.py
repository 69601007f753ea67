"""Knowledge: one stream per question the mind can answer, keyed by the question's intent.

The intent is the question trimmed, its whitespace collapsed and lower-cased; its keyed hash
(HMAC under the mind's knowledge secret, domain/text_keys.py) names the stream, so capturing the
same intent again always lands on the same item (a revision, never a duplicate), and the stream
id, which is in the clear, cannot confirm a guessed question. Every change is an event: the
item's history is its stream. An item whose words were forgotten (their keys destroyed) is
`forgotten`: every lookup treats it as never captured, and capturing its question again starts
it anew on the same stream.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from mindledger.domain.choices import FRESHNESS as FRESHNESS
from mindledger.domain.choices import POLICIES as POLICIES
from mindledger.domain.choices import PPM as PPM
from mindledger.domain.choices import STATES as STATES
from mindledger.domain.events import FORGOTTEN, AggregateRoot, DomainEvent, stream_id
from mindledger.domain.text import clean_text
from mindledger.domain.text import normalise_intent as normalise_intent
from mindledger.domain.text_keys import CONTENT, KNOWLEDGE, TextKeys

ValidationState = Literal[
    "unverified", "plausible", "supported", "verified", "disputed", "retracted"
]
Freshness = Literal["immutable", "stable", "dynamic", "volatile"]
ReusePolicy = Literal["always", "reuse-unless-stale", "revalidate-if-stale", "never-direct"]
SourceType = Literal["owner", "document", "file", "api", "memory", "web", "model"]
Role = Literal["owner", "ai"]
Judgement = Literal["verify", "dispute", "retract", "approve", "discard"]


DEFAULT_STATE: ValidationState = "unverified"
DEFAULT_CONFIDENCE = 500_000
DEFAULT_FRESHNESS: Freshness = "stable"
DEFAULT_POLICY: ReusePolicy = "reuse-unless-stale"
# The maximum age of each freshness class since the item was last validated (immutable: none).
MAX_AGE_DAYS: dict[str, int | None] = {"immutable": None, "stable": 30, "dynamic": 7, "volatile": 1}
APPROVED_CONFIDENCE = 950_000
QUESTION_LIMIT = 2000
ANSWER_LIMIT = 20_000


def intent_hash(question: str, keys: TextKeys) -> str:
    """The keyed hash of a question's intent (HMAC-SHA256, hex)."""
    return keys.keyed(KNOWLEDGE, normalise_intent(question))


def legacy_intent_hash(question: str) -> str:
    """The intent hash ledgers written before keyed hashes gave a question (sha256): only
    looked up, so an item captured then is still the answer to its question."""
    return hashlib.sha256(normalise_intent(question).encode("utf-8")).hexdigest()


def item_id(hash_: str) -> str:
    """The short id users see, e.g. `k1a2b3c4d5e`."""
    return "k" + hash_[:10]


def knowledge_stream(hash_: str) -> UUID:
    """The stream of the item whose intent has this hash."""
    return stream_id("knowledge", hash_)


def content_hash(keys: TextKeys, **content: object) -> str:
    """The keyed hash of one revision's content (canonical JSON): a provenance's hash is in
    the clear, and none of them may confirm a guessed answer."""
    data = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return keys.keyed(CONTENT, data)


class Provenance(BaseModel):
    """Where an answer came from: source type, reference, time, content hash and a note."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    source: SourceType
    reference: str
    time: datetime
    content_hash: str | None = None
    note: str | None = None


class Knowledge(AggregateRoot):
    """A question's answer, its provenance, validation state, confidence and freshness."""

    class Captured(DomainEvent):
        TOPIC = "mind.knowledge.captured"
        SEALED = {
            "question": "own",
            "answer": "own",
            "intent_hash": "own",
            "content_hash": "own",
            "previous_hash": "own",
        }
        item_id: str
        intent_hash: str
        question: str
        answer: str
        concepts: list[str] = []
        state: ValidationState
        confidence_ppm: int
        freshness: Freshness
        max_age_days: int | None
        reuse: ReusePolicy
        provenance: list[Provenance]
        role: Role
        revision: int
        content_hash: str
        previous_hash: str | None = None
        turn_id: str | None = None

    class Edited(DomainEvent):
        TOPIC = "mind.knowledge.edited"
        SEALED = {"answer": "own", "content_hash": "own", "previous_hash": "own", "note": "own"}
        answer: str
        revision: int
        content_hash: str
        previous_hash: str
        role: Role
        note: str | None = None

    class Judged(DomainEvent):
        TOPIC = "mind.knowledge.judged"
        SEALED = {"note": "own"}
        judgement: Judgement
        state: ValidationState
        confidence_ppm: int
        role: Role
        note: str | None = None
        turn_id: str | None = None

    class Deleted(DomainEvent):
        TOPIC = "mind.knowledge.deleted"
        SEALED = {"content_hash": "own", "previous_hash": "own", "reason": "own"}
        revision: int
        content_hash: str
        previous_hash: str
        role: Role
        reason: str | None = None

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.item_id = ""
        self.intent_hash = ""
        self.question = ""
        self.answer = ""
        self.concepts: list[str] = []
        self.state: ValidationState = DEFAULT_STATE
        self.confidence_ppm = DEFAULT_CONFIDENCE
        self.freshness: Freshness = DEFAULT_FRESHNESS
        self.max_age_days: int | None = MAX_AGE_DAYS[DEFAULT_FRESHNESS]
        self.reuse: ReusePolicy = DEFAULT_POLICY
        self.provenance: list[Provenance] = []
        self.captured_by: Role = "owner"
        self.revision = 0
        self.content_hash = ""
        self.deleted = False
        self.forgotten = False
        self.validated_at: datetime | None = None
        self.turn_id: str | None = None

    @property
    def known(self) -> bool:
        """Whether the item exists for a lookup: captured, and its words not forgotten (a
        deleted item is known: its tombstone shows)."""
        return self.version > 0 and not self.forgotten

    @classmethod
    def new(cls, question: str, keys: TextKeys) -> Knowledge:
        """An empty item for a question (nothing recorded until it is captured)."""
        question = clean_text(question, "question", QUESTION_LIMIT)
        hash_ = intent_hash(question, keys)
        item = cls(knowledge_stream(hash_))
        item.intent_hash, item.item_id = hash_, item_id(hash_)
        return item

    def capture(
        self,
        question: str,
        answer: str,
        at: datetime,
        *,
        role: Role,
        state: ValidationState,
        confidence_ppm: int,
        freshness: Freshness,
        reuse: ReusePolicy,
        provenance: list[Provenance],
        concepts: list[str],
        keys: TextKeys,
        turn_id: str | None = None,
    ) -> None:
        """Record a revision of the answer (the first one creates the item)."""
        question = clean_text(question, "question", QUESTION_LIMIT)
        answer = clean_text(answer, "answer", ANSWER_LIMIT)
        # A forgotten item's hash went with its words; its question names this stream again,
        # for a new item (revision 1, no previous hash), as if none had been captured.
        hash_ = intent_hash(question, keys) if self.forgotten else self.intent_hash
        self.trigger(
            self.Captured,
            at,
            item_id=self.item_id,
            intent_hash=hash_,
            question=question,
            answer=answer,
            concepts=concepts,
            state=state,
            confidence_ppm=confidence_ppm,
            freshness=freshness,
            max_age_days=MAX_AGE_DAYS[freshness],
            reuse=reuse,
            provenance=provenance,
            role=role,
            revision=1 if self.forgotten else self.revision + 1,
            content_hash=content_hash(keys, question=question, answer=answer, concepts=concepts),
            previous_hash=None if self.forgotten else self.content_hash or None,
            turn_id=turn_id,
        )

    def edit(
        self, answer: str, role: Role, at: datetime, keys: TextKeys, note: str | None = None
    ) -> None:
        """A new revision with another answer; the previous one and its hash stay."""
        answer = clean_text(answer, "answer", ANSWER_LIMIT)
        self.trigger(
            self.Edited,
            at,
            answer=answer,
            revision=self.revision + 1,
            content_hash=content_hash(
                keys, question=self.question, answer=answer, concepts=self.concepts
            ),
            previous_hash=self.content_hash,
            role=role,
            note=note,
        )

    def judge(
        self,
        judgement: Judgement,
        state: ValidationState,
        confidence_ppm: int,
        role: Role,
        at: datetime,
        note: str | None = None,
        turn_id: str | None = None,
    ) -> None:
        """Record an owner's decision on the item's validity."""
        self.trigger(
            self.Judged,
            at,
            judgement=judgement,
            state=state,
            confidence_ppm=confidence_ppm,
            role=role,
            note=note,
            turn_id=turn_id,
        )

    def delete(self, role: Role, at: datetime, keys: TextKeys, reason: str | None = None) -> None:
        """A tombstone revision: the content leaves the read models; the ledger keeps it."""
        self.trigger(
            self.Deleted,
            at,
            revision=self.revision + 1,
            content_hash=content_hash(keys, deleted=True, previous=self.content_hash),
            previous_hash=self.content_hash,
            role=role,
            reason=reason,
        )

    def when_Captured(self, e: Captured) -> None:
        self.item_id, self.intent_hash = e.item_id, e.intent_hash
        self.question, self.answer, self.concepts = e.question, e.answer, list(e.concepts)
        self.state, self.confidence_ppm = e.state, e.confidence_ppm
        self.freshness, self.max_age_days, self.reuse = e.freshness, e.max_age_days, e.reuse
        self.provenance, self.captured_by = list(e.provenance), e.role
        self.revision, self.content_hash = e.revision, e.content_hash
        self.deleted, self.validated_at, self.turn_id = False, e.timestamp, e.turn_id
        self.forgotten = False
        if e.intent_hash == FORGOTTEN:
            self._forget()

    def when_Edited(self, e: Edited) -> None:
        self.answer, self.revision, self.content_hash = e.answer, e.revision, e.content_hash
        if e.content_hash == FORGOTTEN:
            self._forget()

    def when_Judged(self, e: Judged) -> None:
        self.state, self.confidence_ppm, self.validated_at = e.state, e.confidence_ppm, e.timestamp

    def when_Deleted(self, e: Deleted) -> None:
        self.deleted, self.revision, self.content_hash = True, e.revision, e.content_hash
        self.answer = ""
        if e.content_hash == FORGOTTEN:
            self._forget()

    def _forget(self) -> None:
        # The mapper drops the event's FORGOTTEN_MARK (events forbid extra fields), but a
        # sealed hash field reads FORGOTTEN exactly when the event's own key is gone: a real
        # hash never does. Nothing of the item's words stays to be offered.
        self.forgotten = True
        self.question = self.answer = self.intent_hash = self.content_hash = ""
        self.concepts, self.provenance = [], []
