"""An export's events checked as replay reads them and applied to a scratch read model as they
are read (`mind verify --export`, `mind import ledger`). A chain recomputed with the public rule
proves only that the file is whole: an unknown event type, a mistyped payload or an event the
read side cannot apply after the ones before it (a concept related before it was defined) would
make a mind that refuses every read and turn from then on. So the file is refused at that line.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mindledger.adapters.export_check import ExportedEvent
    from mindledger.projections.engine.projector import Projector

BATCH = 5000  # events applied per scratch transaction


def projected(events: Iterator[ExportedEvent]) -> Iterator[ExportedEvent]:
    """Each event, in order, checked as replay reads it (`export_events.EventRules`) and
    applied to a scratch read model in a temporary folder; raises ExportInvalidError at the
    line of the first one this version cannot replay or project (the read side's failure may
    come after the events before it were yielded: a caller keeps nothing when iteration
    raises)."""
    from mindledger.adapters.export_check import ExportInvalidError
    from mindledger.adapters.export_events import EventProblem, EventRules
    from mindledger.projections.engine.projector import Projector

    rules = EventRules()

    with tempfile.TemporaryDirectory(prefix="mind-export-check-") as folder:
        projector = Projector(Path(folder) / "trial.duckdb")
        try:
            pending: list[ExportedEvent] = []
            for event in events:
                try:
                    e = event
                    rules.check(e.topic, e.aggregate, e.version, e.state, e.keys)
                except EventProblem as problem:
                    raise ExportInvalidError(event.position + 1, str(problem)) from None
                pending.append(event)
                if len(pending) >= BATCH:
                    _apply(projector, pending)
                    pending = []
                yield event
            _apply(projector, pending)
        finally:
            projector.close()


def _apply(projector: Projector, events: list[ExportedEvent]) -> None:
    from mindledger.adapters.export_check import ExportInvalidError
    from mindledger.adapters.hash_chain import ChainRow
    from mindledger.adapters.key_store import MemoryKeyStore
    from mindledger.adapters.sealing import open_rows
    from mindledger.projections.engine.projector import (
        UNREAD_FIELDS,
        ProjectionError,
    )

    if not events:
        return
    rows = [
        ChainRow(e.position, "", e.hash, e.topic, e.aggregate, e.version, e.state) for e in events
    ]
    keys = MemoryKeyStore()
    for e in events:
        keys.keys.update(e.keys)  # the lines' keys open their envelopes, as the ledger's would
    try:
        projector.apply(rows, open_rows(rows, keys, UNREAD_FIELDS))
    except ProjectionError as e:
        line = (e.position or events[0].position) + 1
        reason = " ".join(e.reason.split())[:300]  # one line, whatever the handler said
        raise ExportInvalidError(line, f"the read side cannot apply it: {reason}") from None
