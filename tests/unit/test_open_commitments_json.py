"""The summary's open commitments, written as DuckDB's own JSON, read back as the listing
`mind commitments` prints from the read model, in any time zone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from mindledger.projections.engine.duckdb_files import connect
from mindledger.projections.engine.schema import create_all
from mindledger.projections.queries.listings import commitments, open_commitments_json

ROWS = [
    # stream, cid, text, status, opened_at, closed_at, thread, concepts, evidence, position
    (
        "s-1",
        "c1",
        'Send "the" report \\ today',
        "open",
        datetime(2026, 1, 1, 0, 1, 14, tzinfo=UTC),
        None,
        None,
        [],
        [],
        7,
    ),
    (
        "s-2",
        "c2",
        "Call Zoë \u2028 about the 🦆\tand\nthe\x01rest",
        "open",
        datetime(2026, 7, 1, 12, 0, 0, 500, tzinfo=UTC),
        None,
        "t-9",
        ["topic.a", "topic.b"],
        [41],
        3,
    ),
    (
        "s-3",
        "c3",
        "Already kept",
        "closed",
        datetime(2026, 2, 1, tzinfo=UTC),
        datetime(2026, 2, 2, 3, 4, 5, 6, tzinfo=UTC),
        None,
        [],
        [42, 43],
        5,
    ),
    (
        "s-4",
        "c4",
        "A very old promise",
        "open",
        datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        None,
        None,
        None,
        None,
        11,
    ),
]


@pytest.fixture
def con() -> Iterator[Any]:
    con = connect()  # `:memory:`: an instance of its own, whose TimeZone is the test's
    create_all(con)
    yield con
    con.close()


def _fill(con: Any) -> None:
    for stream, cid, text, status, opened, closed, thread, concepts, evidence, at in ROWS:
        con.execute(
            "INSERT INTO commitments (stream_id, cid, episode, text, status, origin, opened_at, "
            "closed_at, thread, concepts, evidence, opened_position) "
            "VALUES (?, ?, 2, ?, ?, 'user', ?, ?, ?, ?, ?, ?)",
            [stream, cid, text, status, opened, closed, thread, concepts, evidence, at],
        )


@pytest.mark.parametrize(
    "zone", ["Etc/UTC", "America/New_York", "Asia/Kolkata", "America/St_Johns", "Asia/Kathmandu"]
)
def test_the_json_listing_reads_back_as_the_open_commitments_listing(con: Any, zone: str) -> None:
    con.execute(f"SET TimeZone = '{zone}'")
    _fill(con)

    listed = json.loads(open_commitments_json(con))

    assert listed == commitments(con, include_closed=False)
    assert [row["cid"] for row in listed] == ["c2", "c1", "c4"]


def test_no_open_commitment_is_an_empty_array(con: Any) -> None:
    assert open_commitments_json(con) == "[]"
