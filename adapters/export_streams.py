"""What the domain assumes of a ledger's streams, checked on an export's events in order.

An event that decodes is not yet one the mind could have written: anyone can recompute the
public chain over a file that gives an existing commitment id a second stream, a mind a second
identity or plain text where the mind seals its words. The domain finds a stream by an id it
derives (uuid5 of the CID and episode, the token, the source...), so an event under another id
is never found by the commands that should see it (`mind close` closes the derived one and the
forged one stays open). So each event must sit on the stream its payload derives, open its
stream (or follow the event that did), and keep the invariants the aggregates keep: one
identity, created first, a commitment episode opened once and closed once, the next episode
only after the last one closed, turn numbers given once and in order, a relation to a concept
that exists.
"""

from __future__ import annotations

import binascii
import re
from typing import Any
from uuid import UUID

from mindledger.adapters.sealing import ENVELOPE, envelope_key
from mindledger.domain.commitment import Commitment, episode_id
from mindledger.domain.concept import Concept, concept_id
from mindledger.domain.conversation import Conversation, conversation_id
from mindledger.domain.events import FORGOTTEN, DomainEvent
from mindledger.domain.foreign_import import ForeignImport, import_id
from mindledger.domain.forgetting import Forgetting
from mindledger.domain.identity import IDENTITY_ID
from mindledger.domain.knowledge import Knowledge, item_id, knowledge_stream
from mindledger.domain.turn import Turn
from mindledger.domain.turn_numbers import TURN_NUMBERS_ID, TurnNumbers

ENVELOPE_BYTES = 12 + 16  # an AES-GCM nonce and tag around nothing

# The event that opens a stream of each kind, and whether it may come again later.
OPENING: dict[str, tuple[str, bool]] = {
    "identity": ("mind.identity.created", False),
    "commitment": ("mind.commitment.opened", False),
    "concept": ("mind.concept.defined", True),  # each new definition
    "conversation": ("mind.conversation.started", False),
    "import": ("mind.import.started", False),
    "forget": ("mind.forget.forgotten", False),
    "knowledge": ("mind.knowledge.captured", True),  # captured anew once forgotten
    "turn_numbers": ("mind.turn_numbers.given", True),
    "thread": ("mind.thread.opened", False),
    "turn": ("mind.turn.started", False),
    "tick": ("mind.tick.decided", False),
    "ask": ("mind.ask.routed", True),
}
# Sealed fields added to SEALED after sealing began: a mind that sealed before then wrote
# them in the clear for a while (every other sealed field is sealed from the first envelope).
LATER_SEALED = frozenset(
    {
        ("mind.turn.generation_failed", "context"),
        ("mind.concept.related", "relation"),
        ("mind.thread.worked", "artifact"),
        ("mind.thread.resolved", "artifact"),
    }
)
# The streams there is one of in a mind, by kind.
FIXED = {"identity": IDENTITY_ID, "turn_numbers": TURN_NUMBERS_ID}
CID = re.compile(r"c[0-9a-f]{8,64}")


class StreamProblem(ValueError):
    """Raised when an event breaks what the domain assumes of its stream (the reason);
    `position` is the event at fault when it is not the one being checked."""

    def __init__(self, reason: str, position: int | None = None) -> None:
        super().__init__(reason)
        self.position = position


class StreamRules:
    """The invariants of one file's streams, fed its events in order (`finish` at the end)."""

    def __init__(self) -> None:
        self.sealing = False  # an envelope was seen: the mind sealed from then on
        self.sealed_seen: set[tuple[str, str]] = set()
        self.episodes: dict[str, list[bool]] = {}  # cid -> closed?, by episode - 1
        self.commitment_of: dict[UUID, tuple[str, int]] = {}  # stream -> (cid, episode)
        self.concepts: set[str] = set()  # defined tokens
        self.relations: list[tuple[int, str]] = []  # (position, target token)
        self.frozen: set[UUID] = set()  # resolved threads: nothing follows
        self.turn_seq: dict[str, int] = {}  # turn stream hex -> its number
        self.numbered: set[str] = set()  # turns given their number
        self.max_seq = 0
        self.last_given: int | None = None
        self.awaiting: tuple[int, str, int] | None = None  # (position, turn hex, seq)
        self.begun = False  # position 1 was checked: the file holds a mind

    def check(
        self, position: int, kind: str, stream: UUID, event: DomainEvent, raw: dict[str, Any]
    ) -> None:
        """Raise StreamProblem when `event` (at `position`, of a `kind` stream, `raw` as
        stored) breaks an invariant given the events before it."""
        topic = type(event).TOPIC
        if position == 1:
            if topic != OPENING["identity"][0]:
                raise StreamProblem(f"a ledger begins with its mind's {OPENING['identity'][0]}")
            self.begun = True
        self._opening(kind, topic, event.originator_version)
        self._derived(event, stream)
        self._sealed(topic, type(event).SEALED, raw)
        self._awaited(position, event)
        # By class itself: no event class derives from another, and an isinstance against a
        # pydantic model runs its metaclass's check in Python (a tenth of this check).
        if type(event) is Commitment.Opened or type(event) is Commitment.Closed:
            self._commitment(event, stream)
        elif type(event) is Concept.Defined:
            self.concepts.add(event.token)
        elif type(event) is Concept.Related:
            self.relations.append((position, event.target))
        elif type(event) is Concept.Bound and event.kind == "commitment":
            if event.target not in self.episodes:
                raise StreamProblem(f"binds commitment {event.target[:20]!r}, never opened")
        elif type(event) is Turn.Started:
            self._turn_started(position, event)
        elif type(event) is TurnNumbers.Given:
            self._number_given(event)
        if kind == "thread":
            if stream in self.frozen:
                raise StreamProblem(f"thread {stream.hex[:8]} is resolved; nothing follows it")
            if topic == "mind.thread.resolved":
                self.frozen.add(stream)

    def finish(self) -> None:
        """Raise StreamProblem (with its line's position) for what the file left undone."""
        if not self.begun:  # no events: imported, a home no command could use, its chain taken
            raise StreamProblem(
                f"no events: a ledger begins with its mind's {OPENING['identity'][0]}", 1
            )
        if self.awaiting is not None:
            position, turn, seq = self.awaiting
            raise StreamProblem(
                f"turn {turn[:8]} took number {seq} and no mind.turn_numbers.given follows",
                position,
            )
        for position, target in self.relations:
            if target not in self.concepts:
                raise StreamProblem(
                    f"mind.concept.related: concept {target[:80]!r} is never defined", position
                )

    def _sealed(self, topic: str, sealed: dict[str, Any], raw: dict[str, Any]) -> None:
        for name in sealed:
            value = raw.get(name)
            if value is None:
                continue  # an absent or empty field is not sealed (adapters/sealing.py)
            if isinstance(value, dict) and ENVELOPE in value:
                if not _well_formed(value):
                    raise StreamProblem(f"{topic}: field {name!r} is not a well-formed envelope")
                self.sealing = True
                self.sealed_seen.add((topic, name))
                continue
            legacy = (topic, name) in LATER_SEALED and (topic, name) not in self.sealed_seen
            if self.sealing and not legacy:
                raise StreamProblem(
                    f"{topic}: field {name!r} is in the clear where this ledger seals it "
                    "(a sealed envelope belongs there)"
                )

    def _opening(self, kind: str, topic: str, version: int) -> None:
        opening = OPENING.get(kind)
        if opening is None:
            return
        first, again = opening
        if version == 1 and topic != first:
            raise StreamProblem(f"a {kind} stream must begin with {first}, not {topic}")
        if version > 1 and topic == first and not again:
            raise StreamProblem(f"{topic} again, as version {version} of its stream")

    def _derived(self, event: DomainEvent, stream: UUID) -> None:
        expected = _derived_stream(event)
        if expected is not None and expected != stream:
            topic = type(event).TOPIC
            raise StreamProblem(
                f"{topic} in stream {stream.hex[:8]}, where its payload belongs in "
                f"{expected.hex[:8]} (a second stream for one {topic.split('.')[1]})"
            )
        if (
            type(event) is Knowledge.Captured
            and event.intent_hash != FORGOTTEN
            and event.item_id != item_id(event.intent_hash)
        ):
            raise StreamProblem(f"{event.TOPIC}: item_id is not its intent's")

    def _commitment(self, event: Commitment.Opened | Commitment.Closed, stream: UUID) -> None:
        if isinstance(event, Commitment.Closed):
            cid, episode = self.commitment_of[stream]  # opened first (`_opening`)
            if self.episodes[cid][episode - 1]:
                raise StreamProblem(f"commitment {cid} episode {episode} is closed again")
            self.episodes[cid][episode - 1] = True
            return
        cid, episode = event.cid, event.episode
        if not CID.fullmatch(cid):
            raise StreamProblem(f"{event.TOPIC}: {cid[:20]!r} is not a commitment id")
        episodes = self.episodes.setdefault(cid, [])
        if episode != len(episodes) + 1:  # the stream is derived: episode 1 cannot come twice
            raise StreamProblem(
                f"commitment {cid} episode {episode} opened where episode {len(episodes) + 1} "
                "comes next"
            )
        if episodes and not episodes[-1]:
            raise StreamProblem(
                f"commitment {cid} episode {episode} opened while episode {episode - 1} is open"
            )
        episodes.append(False)
        self.commitment_of[stream] = (cid, episode)

    def _awaited(self, position: int, event: DomainEvent) -> None:
        """A numbered turn's number is given by the very next event (the same transaction)."""
        if self.awaiting is None:
            return
        _, turn, seq = self.awaiting
        if not (isinstance(event, TurnNumbers.Given) and event.turn_id == turn):
            raise StreamProblem(
                f"turn {turn[:8]} took number {seq}, and this event is not its "
                "mind.turn_numbers.given"
            )

    def _turn_started(self, position: int, event: Turn.Started) -> None:
        turn = event.originator_id.hex
        if self.last_given is not None:  # numbered by the ledger from then on
            if event.seq != self.last_given + 1:
                raise StreamProblem(
                    f"turn {turn[:8]} is number {event.seq}, where {self.last_given + 1} comes next"
                )
            self.awaiting = (position, turn, event.seq)
        self.turn_seq[turn] = event.seq
        self.max_seq = max(self.max_seq, event.seq)

    def _number_given(self, event: TurnNumbers.Given) -> None:
        turn, seq = event.turn_id, event.seq
        expected = self.max_seq if self.last_given is None else self.last_given + 1
        if seq != expected or self.turn_seq.get(turn) != seq or turn in self.numbered:
            raise StreamProblem(
                f"{event.TOPIC}: number {seq} for turn {turn[:8]}, where the turn started "
                f"just before with number {expected} belongs"
            )
        self.numbered.add(turn)
        self.last_given, self.awaiting = seq, None


def _derived_stream(event: DomainEvent) -> UUID | None:
    """The stream the domain gives this event (None: a random id, or the event's stream was
    fixed by the event that opened it)."""
    fixed = FIXED.get(type(event).TOPIC.split(".")[1])
    if fixed is not None:
        return fixed
    # By class itself, as in `StreamRules.check`.
    if type(event) is Commitment.Opened:
        return episode_id(event.cid, event.episode)
    if type(event) is Concept.Defined:
        return concept_id(event.token)
    if type(event) is Conversation.Started:
        return conversation_id(event.source)
    if type(event) is ForeignImport.Started:
        return import_id(event.format, event.source_key or event.file_sha256)
    if type(event) is Forgetting.Forgotten:
        return Forgetting.stream(event.forget_id)
    if type(event) is Knowledge.Captured and event.intent_hash != FORGOTTEN:
        return knowledge_stream(event.intent_hash)  # its key gone: it cannot be derived
    return None


def _well_formed(value: dict[str, Any]) -> bool:
    """An envelope exactly: a 16-byte key id in hex and base64 of nonce, text and tag."""
    text = value.get("c")
    if envelope_key(value) is None or not isinstance(text, str):
        return False
    try:
        raw = binascii.a2b_base64(text, strict_mode=True)
    except ValueError:
        return False
    return len(raw) >= ENVELOPE_BYTES
