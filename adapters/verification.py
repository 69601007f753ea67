"""The verify use case: the whole chain recomputed, then its end compared with the heads kept
outside the ledger (the home's anchor file, the read model, a hash the user kept).

Every caller (`mind verify`, chat's `/verify`, tests, benchmarks) goes through `verify_ledger`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from mindledger.adapters.hash_chain import AnchorCheck, ChainRow, VerifyResult, verify_chain
from mindledger.adapters.head_anchor import Anchor


class ChainSource(Protocol):
    """What verification reads from a ledger (the SQLite and PostgreSQL readers provide it)."""

    def meta(self) -> tuple[str, str, str]:
        """(ledger id, created at, genesis hash)."""
        ...

    def rows(self, after: int = 0, batch: int = 5000) -> Iterable[ChainRow]:
        """Chain rows joined with their events, in position order."""
        ...

    def orphans(self) -> list[ChainRow]:
        """Event rows without a chain entry."""
        ...

    def find_content(self, digest: str) -> int | None:
        """The position whose chain entry has this content digest."""
        ...

    def find_hash(self, hash_: str, at: int | None = None) -> int | None:
        """The position whose chain hash is this (only position `at`, when given)."""
        ...


def verify_ledger(
    reader: ChainSource,
    anchors: Sequence[Anchor] = (),
    notes: Sequence[AnchorCheck] = (),
    batch: int = 5000,
    unreadable: Sequence[AnchorCheck] = (),
) -> VerifyResult:
    """Recompute every hash; then fail if the ledger ends before, or differs from, any anchor.

    `notes` are anchors that could not be read (reported as they are, never a failure);
    `unreadable` are anchors whose file exists but cannot be read: a failure, since whoever
    damaged it may have hidden a truncation; `batch` is how many rows the reader fetches at a time.
    """
    ledger_id, _, genesis = reader.meta()
    result = verify_chain(genesis, reader.rows(batch=batch), reader.orphans, reader.find_content)
    notes = (*unreadable, *notes)
    if not result.ok:
        checks = tuple(AnchorCheck(a.source, a.position, a.hash, "not checked") for a in anchors)
        return replace(result, anchors=(*checks, *notes))
    if unreadable:
        checks = tuple(AnchorCheck(a.source, a.position, a.hash, "not checked") for a in anchors)
        return replace(result, ok=False, reason="anchor file unreadable", anchors=(*checks, *notes))
    # The chain verified, so its stored hashes are the recomputed ones: an anchor's hash is
    # looked up once rather than watched for on every row (verify's rate stays the chain's).
    checks = tuple(
        _check(a, ledger_id, result.events, reader.find_hash(a.hash, a.position)) for a in anchors
    )
    failed = next((c for c in checks if c.failed), None)
    if failed is None:
        return replace(result, anchors=(*checks, *notes))
    behind = failed.status.startswith("ledger ends")
    return VerifyResult(
        ok=False,
        events=result.events,
        first_bad=result.events + 1 if behind else None,
        reason="ledger behind its anchor" if behind else "ledger differs from its anchor",
        head_hash=result.head_hash,
        anchors=(*checks, *notes),
    )


def _check(anchor: Anchor, ledger_id: str, events: int, position: int | None) -> AnchorCheck:
    def said(status: str) -> AnchorCheck:
        return AnchorCheck(anchor.source, anchor.position, anchor.hash, status)

    if anchor.ledger_id is not None and anchor.ledger_id != ledger_id:
        return said(f"belongs to another ledger ({anchor.ledger_id[:12]})")
    if position is not None and anchor.position in (None, position):
        return said("ok")
    if anchor.position is not None and anchor.position > events:
        return said(f"ledger ends at position {events}, before the anchored {anchor.position}")
    if anchor.position is None:
        return said("this hash is nowhere in the ledger (truncated, rewritten or another ledger)")
    return said(f"the ledger's hash at position {anchor.position} is not the anchored one")
