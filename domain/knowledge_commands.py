"""The commands that change knowledge, each a decision against one `Changes`, with the role
that asks: the owner may do everything; the `ai` role (the model, through control lines) may
capture unverified knowledge and read, never verify, approve, dispute, retract, edit or delete.
The role is checked first, before anything is read, so a refused command changes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple
from uuid import UUID

from mindledger.domain.changes import Changes
from mindledger.domain.errors import InvalidInputError, MindError, NotFoundError
from mindledger.domain.knowledge import (
    APPROVED_CONFIDENCE,
    DEFAULT_CONFIDENCE,
    DEFAULT_FRESHNESS,
    DEFAULT_POLICY,
    DEFAULT_STATE,
    PPM,
    Freshness,
    Judgement,
    Knowledge,
    Provenance,
    ReusePolicy,
    Role,
    ValidationState,
    content_hash,
    intent_hash,
    knowledge_stream,
    legacy_intent_hash,
)
from mindledger.domain.text import clean_token
from mindledger.domain.turn import Turn

OWNER_ONLY = ("verify", "approve", "discard", "dispute", "retract", "edit", "delete", "history")
SOURCES_KEPT = 50  # context items cited as a model answer's sources, at most


class KnowledgeRoleError(MindError):
    """Raised when the ai role tries a decision only the owner may make."""


class UnknownKnowledgeError(NotFoundError):
    """Raised when a target names no knowledge item."""


class AmbiguousKnowledgeError(MindError):
    """Raised when a target names more than one knowledge item (nothing is changed)."""

    def __init__(self, message: str, candidates: Sequence[str]) -> None:
        super().__init__(message)
        self.candidates = list(candidates)


class KnowledgeChange(NamedTuple):
    """What a command did to an item: its id, revision, state and whether it was new."""

    item_id: str
    intent_hash: str
    revision: int
    state: str
    confidence_ppm: int
    created: bool


def change_of(item: Knowledge, created: bool = False) -> KnowledgeChange:
    """The summary of an item after a command."""
    return KnowledgeChange(
        item.item_id, item.intent_hash, item.revision, item.state, item.confidence_ppm, created
    )


def check_role(role: Role, action: str) -> None:
    """Refuse an owner-only action asked by the ai role."""
    if role != "owner" and action in OWNER_ONLY:
        raise KnowledgeRoleError(f"the {role} role cannot {action} knowledge; only the owner can")


def confidence_ppm(fraction: str) -> int:
    """A confidence written as a fraction (`0.92`) in parts per million (920000)."""
    from decimal import Decimal, InvalidOperation

    try:
        value = Decimal(fraction.strip())
    except InvalidOperation:
        raise InvalidInputError(
            f"confidence {fraction!r} is not a number; give e.g. 0.92"
        ) from None
    if not value.is_finite() or not 0 <= value <= 1:
        raise InvalidInputError(f"confidence {fraction!r} must be between 0 and 1")
    return int((value * PPM).to_integral_value())


def find(changes: Changes, hash_: str) -> Knowledge | None:
    """The item of an intent hash, or None when nothing was captured for it or its words were
    forgotten: the one decision of whether an item exists, for every lookup."""
    item = changes.find(Knowledge, knowledge_stream(hash_))
    return item if item is not None and item.known else None


def find_question(changes: Changes, question: str) -> Knowledge | None:
    """The item whose intent is the question's, or None. An item captured in a ledger written
    before intents were keyed is found by its old (sha256) hash when the keyed one names
    nothing: it stays the answer to its question, and a capture revises it."""
    found = find(changes, intent_hash(question, changes.keys))
    return found if found is not None else find(changes, legacy_intent_hash(question))


def require(changes: Changes, hash_: str) -> Knowledge:
    """The live item of an intent hash; UnknownKnowledgeError when absent or deleted."""
    item = find(changes, hash_)
    if item is None or item.deleted:
        raise UnknownKnowledgeError(
            "no such knowledge item"
            + (" (it was deleted)" if item is not None else "")
            + "; `mind knowledge list` shows them"
        )
    return item


def capture(
    changes: Changes,
    question: str,
    answer: str,
    at: datetime,
    role: Role,
    provenance: Sequence[Provenance],
    state: ValidationState | None = None,
    confidence: int | None = None,
    freshness: Freshness | None = None,
    reuse: ReusePolicy | None = None,
    concepts: Sequence[str] = (),
    turn_id: str | None = None,
) -> KnowledgeChange:
    """Capture an answer to a question: a new item, or a revision of the item with the same
    intent. What is not given keeps the item's value (the defaults for a new item, or one
    whose words were forgotten). The ai
    role's capture is always unverified at the default confidence, and may revise only an
    unverified item (never one the owner deleted)."""
    probe = Knowledge.new(question, changes.keys)
    item = find_question(changes, question)
    created = item is None
    if role != "owner":
        if item is not None and (item.deleted or item.state != "unverified"):
            raise KnowledgeRoleError(
                f"the {role} role cannot revise {item.item_id}: it is "
                f"{'deleted' if item.deleted else item.state}; only the owner can"
            )
        state, confidence = "unverified", DEFAULT_CONFIDENCE
    if item is None:
        # A forgotten item's stream goes on (its events stay), holding a new item.
        item = changes.find(Knowledge, probe.id) or probe
        if item is probe:
            changes.add(item)
    tokens = [clean_token(c) for c in concepts] or ([] if created else list(item.concepts))
    item.capture(
        question,
        answer,
        at,
        role=role,
        state=state or (DEFAULT_STATE if created else item.state),
        confidence_ppm=confidence
        if confidence is not None
        else (DEFAULT_CONFIDENCE if created else item.confidence_ppm),
        freshness=freshness or (DEFAULT_FRESHNESS if created else item.freshness),
        reuse=reuse or (DEFAULT_POLICY if created else item.reuse),
        provenance=list(provenance),
        concepts=tokens,
        keys=changes.keys,
        turn_id=turn_id,
    )
    return change_of(item, created)


def judge(
    changes: Changes,
    hash_: str,
    judgement: Judgement,
    role: Role,
    at: datetime,
    confidence: int | None = None,
    note: str | None = None,
) -> KnowledgeChange:
    """Verify (verified, 950,000 ppm unless given), dispute (disputed) or retract (retracted,
    0 ppm) an item."""
    check_role(role, judgement)
    item = require(changes, hash_)
    if judgement in ("verify", "approve"):
        state: ValidationState = "verified"
        ppm = APPROVED_CONFIDENCE if confidence is None else confidence
    elif judgement == "dispute":
        state, ppm = "disputed", item.confidence_ppm if confidence is None else confidence
    else:
        state, ppm = "retracted", 0
    item.judge(judgement, state, ppm, role, at, note)
    return change_of(item)


def edit(changes: Changes, hash_: str, answer: str, role: Role, at: datetime) -> KnowledgeChange:
    """A new revision with another answer, keeping the previous one and its hash."""
    check_role(role, "edit")
    item = require(changes, hash_)
    item.edit(answer, role, at, changes.keys)
    return change_of(item)


def delete(
    changes: Changes, hash_: str, role: Role, at: datetime, reason: str | None = None
) -> KnowledgeChange:
    """A tombstone revision: the content leaves the read models and retrieval."""
    check_role(role, "delete")
    item = require(changes, hash_)
    item.delete(role, at, changes.keys, reason)
    return change_of(item)


def turn_exchange(changes: Changes, turn_id: UUID) -> tuple[str, str, str]:
    """A turn's message, its visible reply and the model that wrote it, from the ledger."""
    stored = changes.app.recorder.select_events(turn_id)
    events = [changes.app.mapper.to_domain_event(s) for s in stored]
    started = [e for e in events if isinstance(e, Turn.Started)]
    replied = [e for e in events if isinstance(e, Turn.Replied)]
    if not started:
        raise MindError(f"no turn has id {turn_id.hex}; `mind log` lists turns")
    if not replied or not replied[0].reply.strip() or not started[0].text.strip():
        raise MindError(f"turn {started[0].seq} has no question and answer to decide on")
    return started[0].text, replied[0].reply, replied[0].model


def model_provenance(
    changes: Changes,
    model: str,
    turn_id: str,
    answer: str,
    at: datetime,
    sources: Sequence[int] = (),
) -> list[Provenance]:
    """A model's answer: the model and turn, then the memory items it had in its context."""
    made = Provenance(
        source="model",
        reference=f"{model} turn {turn_id}",
        time=at,
        content_hash=content_hash(changes.keys, answer=answer),
    )
    return [made] + [
        Provenance(source="memory", reference=f"#{n}", time=at) for n in sources[:SOURCES_KEPT]
    ]


def decide_turn(
    changes: Changes, turn_id: UUID, judgement: Judgement, role: Role, at: datetime
) -> KnowledgeChange:
    """`approve` (the turn's answer becomes verified, 950,000 ppm, and its item with it) or
    `discard` (retracted, 0 ppm) a turn's answer."""
    check_role(role, judgement)
    question, answer, model = turn_exchange(changes, turn_id)
    item = find_question(changes, question)
    if item is None or item.deleted or item.answer != answer:
        if judgement == "discard" and item is not None and not item.deleted:
            raise MindError(
                f"turn {turn_id.hex[:8]}'s answer is not the current answer of {item.item_id}; "
                f"nothing to discard (`mind knowledge retract {item.item_id}` retracts that)"
            )
        capture(
            changes,
            question,
            answer,
            at,
            role,
            [
                *model_provenance(changes, model, turn_id.hex, answer, at),
                Provenance(source="owner", reference=f"{judgement} turn {turn_id.hex}", time=at),
            ],
            turn_id=turn_id.hex,
        )
        item = find_question(changes, question)
        assert item is not None
    state: ValidationState = "verified" if judgement == "approve" else "retracted"
    ppm = APPROVED_CONFIDENCE if judgement == "approve" else 0
    item.judge(judgement, state, ppm, role, at, turn_id=turn_id.hex)
    return change_of(item)
