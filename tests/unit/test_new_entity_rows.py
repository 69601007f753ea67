"""Handlers that write a new entity row whole: each sets every column of its table, so the row
replaces any there without losing a column (a column added to the schema must be added here)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mindledger.projections.engine.handlers import Ev, Rows
from mindledger.projections.engine.registry import HANDLERS
from mindledger.projections.engine.schema import column_names

AT = datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC)
STREAM = "5f0c1c6e9a2b4d7e8f901a2b3c4d5e6f"


@pytest.mark.parametrize(
    ("topic", "table", "state"),
    [
        (
            "mind.commitment.opened",
            "commitments",
            {"cid": "c0ffee12345", "episode": 1, "text": "Send the tax forms", "origin": "user"},
        ),
        (
            "mind.thread.opened",
            "threads",
            {"label": "Why the kiln cracked", "content": "It cooled too fast?", "origin": "user"},
        ),
    ],
)
def test_an_opening_event_writes_every_column_of_its_row(
    topic: str, table: str, state: dict[str, object]
) -> None:
    rows = Rows({table: {STREAM: {"stream_id": STREAM, "status": "forgotten"}}})

    HANDLERS[topic](rows, Ev(7, AT, topic, STREAM, 1, "ab" * 32, state))

    row = rows.entities[table][STREAM]
    assert list(row) == list(column_names(table))
    assert row["status"] == "open" and row["opened_position"] == 7
