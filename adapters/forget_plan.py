"""What a forget destroys: one pass over the ledger's clear fields finds the events a selector
reaches and the data keys their envelopes name (with the events it passed that a link found
later reaches, kept until it ends: the turn whose reply made what goes, the import a
conversation was read from); a second step finds the turns whose sent prompt quoted any of them
(their "context" keys go too). Nothing here decrypts a reached event's words except a turn's
message (to scrub the chat history file) and the contexts it must check.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import orjson

from mindledger.adapters.key_store import KeyStore
from mindledger.adapters.sealing import key_ids
from mindledger.domain.errors import LedgerCorruptError
from mindledger.domain.events import event_class
from mindledger.domain.forgetting import NothingToForgetError, Reach, Selector

# Whose opened `context` lists the memory items a turn's prompt quoted.
CONTEXT_TOPICS = ("mind.turn.completed", "mind.turn.generation_failed")
OPEN_BATCH = 2000


@dataclass
class ForgetPlan:
    """The events one forget reaches and the keys it destroys (ids, counts: never content)."""

    forget_id: str
    selector: Selector
    counts: Counter[str] = field(default_factory=Counter)
    events: int = 0
    keys: set[bytes] = field(default_factory=set)
    context_turns: set[str] = field(default_factory=set)
    messages: list[str] = field(default_factory=list)  # reached messages' words, in memory only
    # Reached events whose words were stored before sealing (an older ledger): in the clear,
    # so no key destruction reaches them.
    unsealed: int = 0
    # The first ledger position whose words the keys sealed: the purge may start from a read
    # model built before it (`projections.engine.purge`).
    first_position: int | None = None
    # Each key's first ledger position: a read model built aside up to some position with the
    # keys of an earlier plan hidden stays valid when every key added since is first used after
    # it (`mindledger.forget_aside`).
    key_first: dict[bytes, int] = field(default_factory=dict)

    def summary(self, existing: int | None = None) -> dict[str, Any]:
        """The plan as the Forgotten event and `--dry-run` state it."""
        return {
            "forget_id": self.forget_id,
            "selector": self.selector.kind,
            "value": self.selector.value,
            "counts": dict(sorted(self.counts.items())),
            "events": self.events,
            "keys": len(self.keys) if existing is None else existing,
            "context_turns": len(self.context_turns),
        }

    def note(self) -> str:
        """What the key store keeps while the forget's purge is unfinished (no content)."""
        return json.dumps(self.summary(), sort_keys=True)


REPLIED = "mind.turn.replied"
OBSERVED = "mind.conversation.message_observed"
# An observed message's session names the turn whose request brought it (application.py).
_BEFORE = re.compile(r" before turn ([0-9a-f]{32})$")


def hex_of(originator_id: Any) -> str:
    """A stream id (a UUID or its text) as 32 hex digits."""
    return originator_id.hex if isinstance(originator_id, UUID) else UUID(str(originator_id)).hex


def plan_forget(reader: Any, selector: Selector, keys: KeyStore | None) -> ForgetPlan:
    """Scan the ledger (clear fields only) for what `selector` reaches."""
    planner = Planner(selector)
    planner.scan(reader)
    return planner.plan(reader)


class Planner:
    """`plan_forget` in two steps, so that a forget can plan, wait, then plan again by scanning
    only the events written meanwhile (`scan` resumes where the last one ended; `plan` may be
    called after each)."""

    def __init__(self, selector: Selector) -> None:
        self.selector = selector
        self.reach = Reach(selector)
        self.position = 0  # the last position scanned
        self.hits: list[tuple[Any, str, dict[str, bytes]]] = []  # reached rows, in order
        self.context_keys: dict[str, set[bytes]] = {}  # turn stream -> its "context" key ids
        self.context_first: dict[str, int] = {}  # turn stream -> first position with one
        self.first_seen: dict[str, int] = {}  # stream -> the position of its first event
        self.contexts: list[Any] = []  # turn.completed rows, opened by `plan`
        self.prompts: list[Any] = []  # turn.replied rows not reached (see `plan`)
        # A stream's events share its id: parsed once (a third of a scan).
        self.hexes: dict[Any, str] = {}
        # Events the scan passed that a later link may still reach (a turn whose reply made
        # what is forgotten, the import a conversation was read from).
        self.held: dict[str, list[tuple[Any, dict[str, bytes]]]] = {}
        self.floor = 0  # set by `plan`: the first position a later prompt may quote from
        # The turns a reached observed message was sent before (its `session`, decision 0020):
        # their prompt carried it, recorded just before it was observed.
        self.preceded: set[str] = set()

    def scan(self, reader: Any) -> None:
        """Read the events after the last position scanned."""
        self.scan_rows(reader.rows(after=self.position, batch=5000))

    def scan_rows(self, rows: Iterable[Any]) -> None:
        """Read `rows`, in position order (`forget_index` passes only those it links)."""
        reach, hexes = self.reach, self.hexes
        for row in rows:
            if row.topic is None or row.state is None or row.originator_id is None:
                raise LedgerCorruptError(f"position {row.position} has no event; run `mind verify`")
            self.position = row.position
            state = orjson.loads(row.state)
            stream = hexes.get(row.originator_id)
            if stream is None:
                stream = hexes[row.originator_id] = hex_of(row.originator_id)
                self.first_seen[stream] = row.position
            at = datetime.fromisoformat(state["timestamp"])
            hit = reach.event(row.topic, stream, state, at)
            turn = row.topic.startswith("mind.turn.")
            hold = not hit and reach.holds(row.topic)
            if not (hit or turn or hold):
                continue  # its key ids matter only when it goes, or may be quoted (a turn's)
            ids = key_ids(row.topic, state)
            cls = event_class(row.topic)
            if cls is not None and turn:
                scoped = {
                    ids[f] for f, scope in cls.SEALED.items() if scope == "context" and f in ids
                }
                if scoped:
                    self.context_keys.setdefault(stream, set()).update(scoped)
                    self.context_first.setdefault(stream, row.position)
            if hold:
                self.held.setdefault(stream, []).append((row, ids))
            if hit:
                self.hits.append((row, stream, ids))
            elif row.topic in CONTEXT_TOPICS:
                self.contexts.append(row)
            elif row.topic == REPLIED:
                self.prompts.append(row)

    def plan(self, reader: Any) -> ForgetPlan:
        """What the events scanned so far make the selector reach."""
        plan = ForgetPlan(uuid.uuid4().hex, self.selector)
        reached: set[int] = set()
        reached_streams: set[str] = set()
        messages: list[Any] = []  # reached turn messages (the chat history is scrubbed of them)
        replies: list[Any] = []  # reached replies (a caller may have sent them back: see below)
        reached_rows: list[Any] = []
        for row, stream, ids in self.hits:
            _take(plan, row, stream, ids, reached, reached_streams, messages)
            reached_rows.append(row)
            if row.topic == REPLIED:
                replies.append(row)
        for stream in sorted(self.reach.late_streams()):
            for row, ids in self.held.get(stream, []):
                _take(plan, row, stream, ids, reached, reached_streams, messages)
                reached_rows.append(row)
                if row.topic == REPLIED:
                    replies.append(row)
        self.reach.check_unambiguous()
        plan.events = sum(plan.counts.values())
        if not plan.events:
            raise NothingToForgetError(
                f"{self.selector.describe()} names nothing this mind holds; `mind log` and the "
                "listings show what there is",
                param="value",
            )
        # A prompt quotes only what was written before it: a turn recorded before the first
        # reached event and before the first event of every reached stream cannot have quoted
        # any of them, so its context is not opened (the contexts of the whole ledger were
        # most of a scan).
        observed = [row for row in reached_rows if row.topic == OBSERVED]
        for row in observed:
            found = _BEFORE.search(str(orjson.loads(row.state).get("session") or ""))
            if found:
                self.preceded.add(found.group(1))
        floor = self.floor = min(
            [
                *reached,
                *(self.first_seen[s] for s in reached_streams),
                *(self.first_seen[t] for t in self.preceded if t in self.first_seen),
            ]
        )
        contexts = [row for row in self.contexts if row.position > floor]
        opener = getattr(reader, "open_states", None)
        if opener is not None:
            for start in range(0, len(contexts), OPEN_BATCH):
                chunk = contexts[start : start + OPEN_BATCH]
                for row, state in zip(chunk, opener(chunk), strict=True):
                    if _quotes(state, reached, reached_streams):
                        plan.context_turns.add(hex_of(row.originator_id))
            plan.messages = [str(s.get("text") or "") for s in opener(messages)] if messages else []
            said = {t.strip() for t in plan.messages}
            said |= (
                {str(s.get("reply") or "").strip() for s in opener(replies)} if replies else set()
            )
            said |= (
                {str(s.get("text") or "").strip() for s in opener(observed)} if observed else set()
            )
            said.discard("")
            # A caller's earlier messages are sent as they came (docs/decisions/0020): a prompt
            # that repeats a reached message or reply word for word goes with it.
            later = [
                row
                for row in [*self.prompts, *contexts]
                if row.position > floor and hex_of(row.originator_id) not in plan.context_turns
            ]
            if said and later:
                for start in range(0, len(later), OPEN_BATCH):
                    chunk = later[start : start + OPEN_BATCH]
                    for row, state in zip(chunk, opener(chunk), strict=True):
                        if _replays(state, said):
                            plan.context_turns.add(hex_of(row.originator_id))
        for turn in plan.context_turns:
            for key in self.context_keys.get(turn, ()):
                plan.keys.add(key)
                _first_use(plan, key, self.context_first[turn])
        plan.first_position = min(
            [
                *reached,
                *(self.context_first[t] for t in plan.context_turns if t in self.context_first),
            ]
        )
        return plan


def _take(
    plan: ForgetPlan,
    row: Any,
    stream: str,
    ids: dict[str, bytes],
    reached: set[int],
    reached_streams: set[str],
    messages: list[Any],
) -> None:
    """Count a reached event and take its keys."""
    reached.add(row.position)
    reached_streams.add(stream)
    plan.counts[row.topic.split(".")[1]] += 1
    plan.keys.update(ids.values())
    for key in ids.values():
        _first_use(plan, key, row.position)
    cls = event_class(row.topic)
    if cls is not None and cls.SEALED.keys() - ids.keys():  # a sealable field not sealed
        state = orjson.loads(row.state)
        if any(state.get(f) is not None for f in cls.SEALED.keys() - ids.keys()):
            plan.unsealed += 1
    if row.topic == "mind.turn.started":
        messages.append(row)
        plan.context_turns.add(stream)  # its own prompt repeats the message


def _first_use(plan: ForgetPlan, key: bytes, position: int) -> None:
    plan.key_first[key] = min(position, plan.key_first.get(key, position))


def _quotes(state: dict[str, Any], positions: set[int], streams: set[str]) -> bool:
    """Whether a turn's opened outcome lists a reached event or stream among its context items;
    a failure recorded before failures listed them (no `context`) may have quoted anything its
    prompt, if it still reads, holds."""
    context = state.get("context")
    if context is None:
        return bool(state.get("prompt"))
    for item in context:
        if not isinstance(item, dict):
            continue
        if item.get("id") in positions or (item.get("stream") or "") in streams:
            return True
    return False


def _replays(state: dict[str, Any], said: set[str]) -> bool:
    """Whether a turn's opened prompt holds, among the earlier messages a caller sent (those
    between the system message and the turn's own), one of the texts in `said`."""
    prompt = state.get("prompt")
    if not isinstance(prompt, list):
        return False
    return any(
        isinstance(m, dict) and str(m.get("content") or "").strip() in said for m in prompt[1:-1]
    )
