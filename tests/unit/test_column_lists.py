"""A small batch's rows sent as a list per column (`unnest`) are stored as the same rows sent
as VALUES are: times with and without a zone, empty and missing lists, integers in a float
column, JSON text, nulls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from mindledger.projections.engine.projector import Projector

PLUS_TWO = timezone(timedelta(hours=2))
TURNS: list[dict[str, Any]] = [
    {
        "stream_id": "a1",
        "seq": 1,
        "text": "Remind me to water the ferns",
        "usage": '{"total_tokens": 30}',
        "latency_ms": 3,
        "cut_off": False,
        "started_at": datetime(2025, 1, 1, 12, 0, 0, 123456),  # no zone: the session's
        "context": '[{"id": 7, "score": 0.25}]',
        "opened": [],
    },
    {
        "stream_id": "b2",
        "seq": 2,
        "latency_ms": 2.75,
        "cut_off": True,
        "started_at": datetime(2025, 1, 1, 12, 0, 0, 5, tzinfo=PLUS_TWO),
        "finished_at": datetime(2025, 1, 1, 10, 0, 1, tzinfo=UTC),
        "opened": ["c1", "c2"],
        "closed": None,
    },
    {"stream_id": "c3", "seq": 3, "reply": "Noted, Ödön.", "rejections": "[]", "opened": [None]},
    {"stream_id": "d4", "seq": 4, "usage": None, "pid": 2**40, "host": "vm"},
]


def _stored(column_rows: int, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    monkeypatch.setattr("mindledger.projections.engine.projector.COLUMN_ROWS", column_rows)
    projector = Projector(":memory:")
    projector._insert("turns", [dict(row) for row in TURNS])
    rows = projector.con.execute("SELECT * FROM turns ORDER BY seq").fetchall()
    projector.close()
    return rows


def test_rows_sent_as_lists_per_column_are_stored_as_values_rows_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    as_values = _stored(len(TURNS) + 1, monkeypatch)

    as_lists = _stored(1, monkeypatch)

    assert as_lists == as_values
    assert len(as_lists) == len(TURNS)
