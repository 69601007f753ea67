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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mindledger.adapters.export_form import ExportedEvent
    from mindledger.projections.engine.projector import Projector

# Events applied per scratch transaction: what a catch-up's batch was (projector.BATCH is now
# a row group of the shared instance's files; a scratch file has DuckDB's default row groups);
# 5,000 cost a 100k-event check ~4% more CPU in statements and commits.
BATCH = 25_000


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
        projector = Projector(Path(folder) / "trial.duckdb", scratch=True)
        try:
            pending: list[ExportedEvent] = []
            opened: list[dict[str, Any]] = []  # their states, opened once by the rules
            for event in events:
                # Unpacked at once: eight field reads of a named tuple were ~1% of the check.
                position, topic, aggregate, version, stored, _, keys, plain, decoded = event
                try:
                    state = rules.check(
                        topic, aggregate, version, stored, keys, position, decoded, plain
                    )
                except EventProblem as problem:
                    raise ExportInvalidError(position + 1, str(problem)) from None
                pending.append(event)
                opened.append(state)
                if len(pending) >= BATCH:
                    _apply(projector, pending, opened)
                    pending, opened = [], []
                yield event
            try:
                rules.finish()
            except EventProblem as problem:
                raise ExportInvalidError((problem.position or 0) + 1, str(problem)) from None
            _apply(projector, pending, opened)
        finally:
            projector.close(keep=False)  # the folder goes with it


def _apply(projector: Projector, events: list[ExportedEvent], opened: list[dict[str, Any]]) -> None:
    from mindledger.adapters.export_check import ExportInvalidError
    from mindledger.adapters.hash_chain import ChainRow
    from mindledger.projections.engine.projector import ProjectionError

    if not events:
        return
    # ChainRow(position, "", hash, topic, aggregate, version, state) from each event's fields
    # by index, without NamedTuple's Python-level __new__ (a call an event).
    new = tuple.__new__
    rows = [new(ChainRow, (e[0], "", e[5], e[1], e[2], e[3], e[4])) for e in events]
    try:
        # The states as the rules opened them with the lines' keys, as the ledger's would be.
        projector.apply(rows, opened)
    except ProjectionError as e:
        line = (e.position or events[0].position) + 1
        reason = " ".join(e.reason.split())[:300]  # one line, whatever the handler said
        raise ExportInvalidError(line, f"the read side cannot apply it: {reason}") from None
