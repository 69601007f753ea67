"""The hash chain: how each recorded event is linked to its predecessor, and how to check it.

hash(n) = sha256(hash(n-1) || content(n)), where content(n) = sha256 over the length-prefixed
topic, aggregate id, aggregate version and stored state bytes (the state holds the event's time and
payload in canonical JSON). hash(0) is the genesis hash over a random ledger id and creation time,
so no two minds share a chain. The rule is adapters/chain_rule.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

# The rule itself (re-exported: most callers import it from here).
from mindledger.adapters.chain_rule import GENESIS_TAG as GENESIS_TAG
from mindledger.adapters.chain_rule import content_hash as content_hash
from mindledger.adapters.chain_rule import genesis_hash as genesis_hash
from mindledger.adapters.chain_rule import link_hash as link_hash


class ChainRow(NamedTuple):
    """A chain entry joined with the event row it points at (None when the event is missing).
    (A tuple: a catch-up builds one per event, and a frozen dataclass cost 5x as much.)"""

    position: int
    content_hash: str
    hash: str
    topic: str | None = None
    originator_id: str | None = None
    version: int | None = None
    state: bytes | None = None

    def recompute(self) -> str | None:
        """The content digest of the event row as it is stored now."""
        if self.topic is None or self.originator_id is None or self.version is None:
            return None
        state = self.state
        if not isinstance(state, bytes | bytearray | memoryview):
            # A row edited by hand can hold TEXT where a BLOB belongs; hash what is there.
            state = str(state if state is not None else "").encode()
        # A version edited into text hashes as that text (it can match no recorded digest).
        version = self.version if isinstance(self.version, int) else str(self.version)
        return content_hash(str(self.topic), str(self.originator_id), version, state)


@dataclass(frozen=True)
class AnchorCheck:
    """How the ledger compares with one head kept outside it (see adapters/head_anchor.py)."""

    source: str
    position: int | None
    hash: str | None
    status: str  # ok, missing, unreadable: ..., not checked, or why the ledger fails it

    @property
    def failed(self) -> bool:
        """Whether this anchor shows the ledger lost or rewrote events."""
        return self.status not in ("ok", "not checked") and not self.status.startswith(
            ("unreadable", "missing")
        )


@dataclass(frozen=True)
class VerifyResult:
    """What `mind verify` reports."""

    ok: bool
    events: int
    first_bad: int | None
    reason: str | None
    head_hash: str | None
    anchors: tuple[AnchorCheck, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The one JSON shape of a verification (also when the ledger could not be read)."""
        return {
            "ok": self.ok,
            "events": self.events,
            "first_bad": self.first_bad,
            "reason": self.reason,
            "head": self.head_hash,
            "anchors": [
                {"source": a.source, "position": a.position, "hash": a.hash, "status": a.status}
                for a in self.anchors
            ],
        }


def _pairs(rows: Iterable[ChainRow]) -> Iterator[tuple[ChainRow, ChainRow | None]]:
    it = iter(rows)
    current = next(it, None)
    while current is not None:
        following = next(it, None)
        yield current, following
        current = following


def _classify(
    row: ChainRow,
    digest: str | None,
    following: ChainRow | None,
    orphans: Callable[[], list[ChainRow]],
    find_content: Callable[[str], int | None],
) -> str:
    """Say why a stored event no longer matches its chain entry."""
    if digest is None:
        return "event deleted"
    next_digest = following.recompute() if following else None
    if following and digest == following.content_hash and next_digest == row.content_hash:
        return "events reordered"
    if following and digest == following.content_hash:
        return "event deleted"
    if following and next_digest == row.content_hash:
        return "event inserted"
    if any(o.recompute() == row.content_hash for o in orphans()):
        return "event inserted"  # the expected event was pushed off the end of the chain
    if find_content(digest) is not None:
        return "events reordered"
    return "payload changed"


def verify_chain(
    genesis: str,
    rows: Iterable[ChainRow],
    orphans: Callable[[], list[ChainRow]],
    find_content: Callable[[str], int | None],
) -> VerifyResult:
    """Recompute every hash in position order; report the first bad position and why.

    `orphans` gives event rows that are not in the chain (inserted after the fact);
    `find_content` finds the chain position whose content digest is given (to tell reorders apart).
    """
    prev, expected, count = genesis, 1, 0
    for row, following in _pairs(rows):
        if row.position != expected:
            return VerifyResult(False, count, expected, "event deleted", None)
        digest = row.recompute()
        if digest != row.content_hash:
            return VerifyResult(
                False,
                count,
                row.position,
                _classify(row, digest, following, orphans, find_content),
                None,
            )
        if _linked(prev, row.content_hash) != row.hash:
            return VerifyResult(False, count, row.position, "chain hash altered", None)
        prev, expected, count = row.hash, expected + 1, count + 1
    if orphans():
        return VerifyResult(False, count, expected, "event inserted", None)
    return VerifyResult(True, count, None, None, prev)


def _linked(prev_hash: str, content: str) -> str | None:
    """`link_hash`, or None when a hand-edited genesis record holds no hex digest."""
    try:
        return link_hash(prev_hash, content)
    except (ValueError, TypeError):
        return None


def chain_entries(
    prev_hash: str, last_position: int, events: Iterable[tuple[int, str, str, int, bytes]]
) -> list[tuple[int, int, str, str]]:
    """Chain rows (position, notification id, content hash, hash) for newly inserted events.

    `events` holds (notification id, topic, originator id as hex, version, state) in insert order.
    """
    entries = []
    for notification_id, topic, originator_id, version, state in events:
        content = content_hash(topic, originator_id, version, state)
        prev_hash = link_hash(prev_hash, content)
        last_position += 1
        entries.append((last_position, notification_id, content, prev_hash))
    return entries
