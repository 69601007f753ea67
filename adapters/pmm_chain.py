"""PMM's hash chain checked with its own rule (../shared/data/pmm/SOURCE.md): each event's hash
recomputes, and each `prev_hash` names the event just before it in the chain.

A hash alone cannot show that an event was deleted, that the file was cut short, or that two
events were swapped: only the links can. So every link is checked too: the first event starts
the chain (`prev_hash` null), no later event does, and each parent is an event earlier in the
file. A parent named by two events is a fork (PMM writes those), not a break.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# Why a link is broken (the reasons `link_breaks` gives, after the PMM id).
MISSING_PARENT = "missing parent"
PARENT_AFTER_CHILD = "parent after child"
NOT_THE_START = "first event not the chain's start"
SECOND_START = "a second chain start"


class Linked(Protocol):
    """What the chain check reads of an event."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def meta(self) -> Any: ...
    @property
    def prev_hash(self) -> str | None: ...
    @property
    def hash(self) -> str: ...


@dataclass(frozen=True)
class ChainReport:
    """What PMM's hash rule says of a file: ids whose hash does not recompute, links that do not
    hold (`"<PMM id>: <reason>"`), and forks (`parent id: child ids`)."""

    events: int
    breaks: tuple[str, ...]
    forks: tuple[str, ...]
    link_breaks: tuple[str, ...] = ()

    @property
    def broken_ids(self) -> set[str]:
        """The PMM ids of every event whose hash or link is broken."""
        return set(self.breaks) | {link.split(": ", 1)[0] for link in self.link_breaks}


def pmm_hash(kind: str, content: str, meta: Any, prev_hash: str | None) -> str:
    """PMM's event hash (the rule in ../shared/data/pmm/SOURCE.md)."""
    body = {"kind": kind, "content": content, "meta": meta, "prev_hash": prev_hash}
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    ).hexdigest()


def verify_chain(events: Sequence[Linked]) -> ChainReport:
    """Recompute every hash with PMM's rule, check every link, find every parent named twice."""
    breaks = tuple(
        e.id for e in events if pmm_hash(e.kind, e.content, e.meta, e.prev_hash) != e.hash
    )
    owner = {e.hash: e.id for e in events}
    children: dict[str, list[str]] = {}
    for e in events:
        if e.prev_hash is not None:
            children.setdefault(e.prev_hash, []).append(e.id)
    forks = tuple(
        f"{owner.get(parent, parent[:12])}: {', '.join(kids)}"
        for parent, kids in children.items()
        if len(kids) > 1
    )
    return ChainReport(len(events), breaks, forks, link_breaks(events))


def link_breaks(events: Sequence[Linked]) -> tuple[str, ...]:
    """`"<PMM id>: <reason>"` for every event whose `prev_hash` does not link it into the chain."""
    place: dict[str, int] = {}
    for index, e in enumerate(events):
        place.setdefault(e.hash, index)
    found = []
    for index, e in enumerate(events):
        reason = None
        if e.prev_hash is None:
            reason = SECOND_START if index else None
        elif index == 0:
            reason = NOT_THE_START
        elif e.prev_hash not in place:
            reason = MISSING_PARENT
        elif place[e.prev_hash] >= index:
            reason = PARENT_AFTER_CHILD
        if reason is not None:
            found.append(f"{e.id}: {reason}")
    return tuple(found)


def source_key(events: Sequence[Linked], first_own: Sequence[str]) -> str | None:
    """What names the PMM mind a file is an export of: the hash of its first event of a kind
    in `first_own` (its first message), else of the chain's first event; None when the file
    does not start the chain (cut short at the front).

    Not the genesis alone: every PMM mind starts with the same default config events (the four
    real files share their first three), while a hash covers all the history before it, so the
    first message's hash differs between minds and stays the same in a longer export."""
    if not events or events[0].prev_hash is not None:
        return None
    return next((e.hash for e in events if e.kind in first_own), events[0].hash)
