"""The ledger's own reads: status, log, verify (every front-end's `status`, `log`, `verify`)."""

from __future__ import annotations

import json
from typing import Any

from mindledger.compose import (
    Home,
    open_reader,
    read_model_paths,
)
from mindledger.domain.choices import KINDS as KINDS
from mindledger.domain.errors import MindError
from mindledger.domain.events import FORGOTTEN_MARK


def status_data(home: Home) -> dict[str, Any]:
    """What `mind status --json` prints (the HTTP API's status too)."""
    from mindledger.identity_view import identity_view
    from mindledger.projections.engine.status import projection_status
    from mindledger.vector_projection import vectors_line

    reader = open_reader(home, sealed=False)  # the chain's head: no sealed field read
    try:
        ledger_id, created_at, _ = reader.meta()
        position, head_hash = reader.head()
    finally:
        reader.close()
    identity = identity_view(home)
    projections = projection_status(read_model_paths(home), position)
    vectors = vectors_line(home, position, identity.config)
    if vectors is not None:  # the vector projection, beside the read model
        projections.append(vectors)
    return {
        "home": str(home.path),
        "backend": home.backend(),
        "name": identity.name,
        "model": identity.model,
        "ledger_id": ledger_id,
        "created_at": created_at,
        "head": {"position": position, "hash": head_hash},
        "projections": projections,
    }


def event_json(row: Any, state: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ledger event as `mind log --json` prints it (the HTTP events stream too); `state`:
    the row's state as the reader opened it (sealed fields in the clear, or "[forgotten]")."""
    if state is None:
        state = json.loads(row.state or b"{}")  # rows join events: a row always has its state
    state = {k: v for k, v in state.items() if k != FORGOTTEN_MARK}
    return {
        "position": row.position,
        "time": state.get("timestamp"),
        "type": row.topic,
        "aggregate": row.originator_id,
        "version": row.version,
        "hash": row.hash,
        "payload": {k: v for k, v in state.items() if k != "timestamp"},
    }


def opened_events(reader: Any, rows: list[Any]) -> list[dict[str, Any]]:
    """`event_json` of each row, its sealed fields opened by the reader."""
    return [event_json(r, s) for r, s in zip(rows, reader.open_states(rows), strict=True)]


def log_events(home: Home, limit: int, kind: str | None = None) -> list[dict[str, Any]]:
    """The latest `limit` events (of one aggregate kind), oldest first: `mind log --json`."""
    reader = open_reader(home)
    try:
        return opened_events(reader, reader.tail(limit, f"mind.{kind}." if kind else ""))
    finally:
        reader.close()


def verify_home(home: Home, head: str | None = None) -> Any:
    """The verify use case over this home's ledger, with every head kept outside it: the
    anchor file, the published read model and `head` (a hash the user kept)."""
    from mindledger.adapters.hash_chain import AnchorCheck
    from mindledger.adapters.head_anchor import Anchor, HeadAnchorFile
    from mindledger.adapters.verification import verify_ledger
    from mindledger.projections.engine.status import read_model_head

    anchors: list[Anchor] = []
    notes: list[AnchorCheck] = []
    unreadable: list[AnchorCheck] = []
    try:
        kept = HeadAnchorFile(home.head_anchor).read()
        if kept is None:  # a note: homes made before anchors existed have none
            missing = (
                "missing (not a failure: homes made before anchors have none; "
                "the next write starts one)"
            )
            notes.append(AnchorCheck(str(home.head_anchor), None, None, missing))
        else:
            anchors.append(kept)
    except MindError as e:
        unreadable.append(AnchorCheck(str(home.head_anchor), None, None, f"unreadable: {e}"))
    reader = open_reader(home)
    try:
        try:
            projected = read_model_head(read_model_paths(home))
            if projected is not None:
                anchors.append(Anchor("read model", projected[1], projected[0]))
        except MindError as e:
            notes.append(AnchorCheck("read model", None, None, f"unreadable: {e}"))
        if head is not None:
            anchors.append(Anchor("--head", head))
        return verify_ledger(reader, anchors, notes, unreadable=unreadable)
    finally:
        reader.close()
