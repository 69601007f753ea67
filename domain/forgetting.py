"""Forgetting: what a forget names (`Selector`), which events it reaches (`reaches`), and the
`Forgotten` fact that records it — the selector, counts, time and who, never the content.

The words themselves are destroyed by deleting their data keys (adapters/key_store.py); the
ledger keeps its ciphertext, so the hash chain verifies before and after. Only the owner may
forget: a model's control line never can (`check_forget_role`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from mindledger.domain.errors import InvalidInputError, MindError, NotFoundError
from mindledger.domain.events import AggregateRoot, DomainEvent, stream_id
from mindledger.domain.text import clean_token

SelectorKind = Literal[
    "turn", "conversation", "speaker", "commitment", "concept", "thread", "knowledge", "before"
]
SELECTOR_KINDS: tuple[str, ...] = (
    "turn",
    "conversation",
    "speaker",
    "commitment",
    "concept",
    "thread",
    "knowledge",
    "before",
)
# A stream named by an id prefix needs this many hex digits (a thread's `t` + 8, a turn's 8).
MIN_PREFIX = 8


class ForgetRoleError(MindError):
    """Raised when anyone but the owner asks to forget (a model's control line)."""


class NothingToForgetError(NotFoundError):
    """Raised when a selector names nothing this mind holds."""


def check_forget_role(role: str) -> None:
    """Refuse every role but the owner's."""
    if role != "owner":
        raise ForgetRoleError(
            "only the mind's owner can forget (`mind forget`, or the server with the mind's "
            "token); a model's FORGET line is refused"
        )


@dataclass(frozen=True)
class Selector:
    """One forget's target: `kind` and its value as given (an id, a name, a CID, a time)."""

    kind: SelectorKind
    value: str
    before: datetime | None = None  # the parsed time of a `before` selector

    def describe(self) -> str:
        """The selector in words, its kind as a request word (`speaker`, which the command line
        shows as its flag, --speaker) and its value (a long value cut: one line)."""
        value = self.value if len(self.value) <= 80 else self.value[:77] + "..."
        return f"`{self.kind}` {value}"


def hex_prefix(value: str, kind: str) -> str:
    """An id or id prefix as lower-case hex (a thread's leading `t`, an item's `k` dropped)."""
    text = value.strip().lower()
    if (kind, text[:1]) in (("thread", "t"), ("knowledge", "k")):
        text = text[1:]
    text = text.replace("-", "")
    if len(text) < MIN_PREFIX or any(c not in "0123456789abcdef" for c in text):
        raise InvalidInputError(
            f"`{kind}` takes an id or at least {MIN_PREFIX} of its first hex digits "
            f"(got {value!r}); `mind log` and the listings show them",
            param=kind,
        )
    return text


class Reach:
    """Decides, one stored event at a time (its clear fields only), whether a selector reaches
    it. Streams a selector names by an id prefix must be unambiguous."""

    def __init__(self, selector: Selector) -> None:
        self.selector = selector
        kind = selector.kind
        self.prefix = (
            hex_prefix(selector.value, kind)
            if kind in ("turn", "conversation", "thread", "knowledge")
            else ""
        )
        # Tokens are stored normalised (lower-case), as `mind concept define` takes them.
        self.concept_stream = (
            stream_id("concept", clean_token(selector.value, "`concept`")).hex
            if kind == "concept"
            else ""
        )
        self.speaker = selector.value.strip().casefold() if kind == "speaker" else ""
        self.streams: set[str] = set()  # streams the selector reached as a whole
        self.candidates: set[str] = set()  # streams an id prefix matched (for ambiguity)
        self.messages: set[str] = set()  # turns whose message the selector reached
        # Streams linked once the scan passed some of their events (a reached item's turns, the
        # turn whose reply changed a reached stream): `late_streams`, whose events go too.
        self.linked: set[str] = set()
        self.sources: set[str] = set()  # reached conversations' sources ("pmm/<16 hex>")
        self.imports: dict[str, str] = {}  # import stream -> the conversation source it fed

    def event(self, topic: str, stream: str, state: dict[str, Any], at: datetime) -> bool:
        """Whether the selector reaches this event (`stream`: the aggregate id in hex)."""
        hit = self._reaches(topic, stream, state, at)
        if hit and self.selector.kind == "knowledge" and state.get("turn_id"):
            self.linked.add(str(state["turn_id"]).lower())  # its raw reply holds the item
        return hit

    def _reaches(self, topic: str, stream: str, state: dict[str, Any], at: datetime) -> bool:
        kind = self.selector.kind
        if kind == "before":
            assert self.selector.before is not None
            return at < self.selector.before
        if stream in self.streams:
            return True
        turn_id = str(state.get("turn_id") or "")
        if topic == "mind.ask.routed" and turn_id in self.messages:
            return True  # a turn answered from knowledge: its question is the turn's message
        captured = topic == "mind.knowledge.captured" and kind in ("turn", "speaker")
        if captured and turn_id in self.messages:  # "remember that ...": the turn's words
            return self._take(stream, ambiguous=False)
        if kind == "speaker":
            if topic == "mind.ask.routed" and self.speaker == "user":
                return bool(state.get("via", "ask") == "ask")  # `mind ask`: the owner's
            said = topic in ("mind.turn.started", "mind.conversation.message_observed")
            speaker = str(state.get("speaker", "")).casefold()
            if said and speaker == self.speaker:
                if topic == "mind.turn.started":
                    self.messages.add(stream)
                return True
            return False
        first = {
            "turn": "mind.turn.started",
            "conversation": "mind.conversation.started",
            "thread": "mind.thread.opened",
        }
        if kind in first and topic == first[kind] and stream.startswith(self.prefix):
            if kind == "turn":
                self.messages.add(stream)
            if kind == "conversation":
                self.sources.add(str(state.get("source") or ""))
            return self._take(stream)
        if kind == "conversation" and topic == "mind.import.started":
            # A PMM import keeps every record (its messages' words too) in a stream of its own,
            # written before the conversation: `late_streams` matches the two by source.
            key = str(state.get("source_key") or state.get("file_sha256") or "")
            self.imports[stream] = f"{state.get('format')}/{key[:16]}"
            return False
        if (
            kind in ("commitment", "concept", "thread")
            and topic == "mind.turn.completed"
            and not self.streams.isdisjoint(state.get("changed_streams") or ())
        ):
            # The turn whose reply made or changed it: its raw reply holds the control line.
            self.messages.add(stream)
            self.linked.add(stream)
            return self._take(stream, ambiguous=False)
        cid = self.selector.value.strip().lower() if kind == "commitment" else None
        if topic == "mind.commitment.opened" and str(state.get("cid", "")).lower() == cid:
            return self._take(stream, ambiguous=False)
        if kind == "concept" and topic.split(".")[1] == "concept" and stream == self.concept_stream:
            return self._take(stream, ambiguous=False)
        if kind == "knowledge":
            item = str(state.get("item_id") or "")
            if topic == "mind.knowledge.captured" and (
                item.lower()[1:].startswith(self.prefix) or stream.startswith(self.prefix)
            ):
                return self._take(stream)
            if topic == "mind.ask.routed" and item and item.lower()[1:].startswith(self.prefix):
                return True
        return False

    def holds(self, topic: str) -> bool:
        """Whether an unreached event of `topic` may be reached by a link found later."""
        if self.selector.kind in ("knowledge", "commitment", "concept", "thread"):
            return topic.startswith("mind.turn.")
        return self.selector.kind == "conversation" and topic.startswith("mind.import.")

    def late_streams(self) -> set[str]:
        """Streams whose every event goes, found only once the scan passed some of them."""
        fed = {s for s, source in self.imports.items() if source in self.sources}
        return self.linked | fed

    def _take(self, stream: str, ambiguous: bool = True) -> bool:
        if ambiguous:
            self.candidates.add(stream)
        self.streams.add(stream)
        return True

    def check_unambiguous(self) -> None:
        """Refuse an id prefix that named more than one stream (nothing is destroyed)."""
        if len(self.candidates) > 1:
            shown = ", ".join(sorted(c[:12] for c in self.candidates)[:5])
            raise InvalidInputError(
                f"{self.selector.describe()} names {len(self.candidates)} streams ({shown}); "
                "give more of the id"
            )


class Forgetting(AggregateRoot):
    """One forget: a stream of its own, named by its id, so a forget finished after a crash
    records its fact once."""

    class Forgotten(DomainEvent):
        TOPIC = "mind.forget.forgotten"
        forget_id: str
        selector: str  # the kind, e.g. "speaker"
        value: str  # what the selector named: an id, a name, a CID, a time (never content)
        counts: dict[str, int]  # events reached, by aggregate kind
        events: int
        keys: int  # data keys destroyed
        context_turns: int  # turns whose sent prompt quoted what was forgotten
        role: str
        via: str  # "cli", "server" or "python" (the floor called from a program)

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.recorded = False

    @staticmethod
    def stream(forget_id: str) -> UUID:
        """The stream of forget `forget_id`."""
        return stream_id("forget", forget_id)

    def record(self, plan: dict[str, Any], role: str, via: str, at: datetime) -> None:
        """Record the forget once (again: nothing)."""
        check_forget_role(role)
        if self.recorded:
            return
        self.trigger(
            self.Forgotten,
            at,
            forget_id=plan["forget_id"],
            selector=plan["selector"],
            value=plan["value"],
            counts=plan["counts"],
            events=plan["events"],
            keys=plan["keys"],
            context_turns=plan["context_turns"],
            role=role,
            via=via,
        )

    def when_Forgotten(self, e: Forgotten) -> None:
        self.recorded = True
