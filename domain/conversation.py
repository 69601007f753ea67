"""Conversation: messages observed from elsewhere (imports), one stream per source conversation."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from mindledger.domain.errors import ConflictError
from mindledger.domain.events import AggregateRoot, DomainEvent, stream_id
from mindledger.domain.text import clean_text

# A title is one line; ChatGPT's are short, a longer one is cut here.
MAX_TITLE = 500


def conversation_id(source: str) -> UUID:
    """The stream id of an imported conversation, e.g. `locomo/conv-26`."""
    return stream_id("conversation", source)


class ConversationTakenError(ConflictError):
    """Raised when a conversation chosen for a transcript holds another one by the time the
    transcript is written (a concurrent import of a transcript that begins alike took it), or
    a transcript is given a conversation that holds another (`position`: the first message, from
    1, where the two differ)."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.position = position


@dataclass(frozen=True)
class Observed:
    """One message to import."""

    speaker: str
    text: str
    said_at: datetime
    source_id: str
    session: str | None = None
    caption: str | None = None


class Conversation(AggregateRoot):
    """An imported conversation: who said what, when, with its original id."""

    class Started(DomainEvent):
        TOPIC = "mind.conversation.started"
        source: str
        participants: list[str]

    class Titled(DomainEvent):
        """The conversation's title, as its source names it (a ChatGPT chat's title)."""

        TOPIC = "mind.conversation.titled"
        SEALED = {"title": "own"}
        title: str

    class MessageObserved(DomainEvent):
        TOPIC = "mind.conversation.message_observed"
        SEALED = {"text": "own", "caption": "own", "source_id": "own"}
        speaker: str
        text: str
        said_at: datetime
        source_id: str
        session: str | None = None
        caption: str | None = None

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.source = ""
        self.participants: list[str] = []
        self.source_ids: set[str] = set()
        self.title: str | None = None
        # source id -> digest of (speaker, text): lets an import recognise a message recorded
        # under an older id scheme (`same_message`).
        self.fingerprints: dict[str, bytes] = {}
        # The ids of the messages with text in the order they were recorded: a transcript is
        # this conversation when one of the two begins the other (`differs_at`).
        self.order: list[str] = []

    @classmethod
    def start(cls, source: str, participants: list[str], at: datetime) -> Conversation:
        """Begin recording a conversation from `source`."""
        conversation = cls(conversation_id(source))
        conversation.trigger(cls.Started, at, source=source, participants=participants)
        return conversation

    def observe(
        self,
        speaker: str,
        text: str,
        said_at: datetime,
        source_id: str,
        at: datetime,
        session: str | None = None,
        caption: str | None = None,
    ) -> bool:
        """Record one message; a source id already recorded is skipped (imports are idempotent)."""
        if source_id in self.source_ids:
            return False
        self.trigger(
            self.MessageObserved,
            at,
            speaker=clean_text(speaker, "speaker", 200, single_line=True),
            text=clean_text(text, "message", 100_000) if text.strip() else "",
            said_at=said_at,
            source_id=source_id,
            session=session,
            caption=caption,
        )
        return True

    def entitle(self, title: str, at: datetime) -> None:
        """Record the conversation's title when it has none or another (blank titles aside)."""
        title = " ".join(title.split())[:MAX_TITLE]
        if title and title != self.title:
            self.trigger(self.Titled, at, title=clean_text(title, "title", MAX_TITLE))

    def differs_at(self, messages: Sequence[Observed]) -> int | None:
        """Where the transcript `messages` and this conversation's messages, both in order,
        first differ (a position from 1), or None when they are the same as far as the shorter
        goes: the transcript is this conversation again, grown, or an older copy of it."""
        for n, (recorded, m) in enumerate(zip(self.order, messages, strict=False), 1):
            if not same_message(recorded, self.fingerprints[recorded], m):
                return n
        return None

    def held_of(self, messages: Sequence[Observed]) -> int:
        """How many of the transcript's first messages this conversation already holds: the
        transcript is this conversation from some message on (again, grown, or a later part
        of it: what overlaps its end is held), or continues it (its first message is not
        here: 0, so a day's log after the day before goes on where it ended). Raises
        ConversationTakenError when its first message is here but what follows differs:
        another transcript that begins alike, which must not be folded in."""
        if not messages:
            return 0
        first = messages[0]
        starts = [
            p
            for p, recorded in enumerate(self.order)
            if same_message(recorded, self.fingerprints[recorded], first)
        ]
        for p in starts:
            tail = self.order[p:]
            pairs = zip(tail, messages, strict=False)
            if all(same_message(r, self.fingerprints[r], m) for r, m in pairs):
                return min(len(tail), len(messages))
        if not starts:
            return 0
        at = self.differs_at(messages) or 1
        raise ConversationTakenError(f"conversation {self.source} holds another transcript", at)

    def agrees(self, messages: Sequence[Observed]) -> bool:
        """Whether the transcript `messages` is this conversation (`differs_at`), which holds
        a message (an empty one is no transcript's)."""
        return bool(self.order) and self.differs_at(messages) is None

    def when_Started(self, e: Started) -> None:
        self.source, self.participants = e.source, list(e.participants)

    def when_Titled(self, e: Titled) -> None:
        self.title = e.title

    def when_MessageObserved(self, e: MessageObserved) -> None:
        self.source_ids.add(e.source_id)
        if e.text:  # imports before empty messages were skipped recorded them
            self.order.append(e.source_id)
        self.fingerprints[e.source_id] = fingerprint(e.speaker, e.text)


def same_message(recorded_id: str, recorded_print: bytes, m: Observed) -> bool:
    """Whether the message recorded as `recorded_id` (with the `fingerprint` `recorded_print`)
    is the transcript's message `m` at the same position: the same id, or an id of another
    scheme (the part before its first colon: chat imports before content ids named a line
    `history.jsonl:3`, now `chat:<hash>`) with the same speaker and text."""
    if recorded_id == m.source_id:
        return True
    older = recorded_id.partition(":")[0] != m.source_id.partition(":")[0]
    return older and recorded_print == fingerprint(m.speaker, m.text)


def fingerprint(speaker: str, text: str) -> bytes:
    """A digest of a message's speaker and (cleaned) text."""
    # Speakers compared without case: imports now store chat roles lower-cased.
    return hashlib.blake2b(f"{speaker.lower()}\x00{text}".encode(), digest_size=16).digest()
