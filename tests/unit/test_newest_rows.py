"""`newest` gives what the ordered read gives, from where a session's last answer began, whatever
was written, superseded or deleted since."""

from __future__ import annotations

from typing import Any

import _duckdb as duckdb
import pytest

from mindledger.projections.engine.kept_reads import KeptReads
from mindledger.projections.retrieval.newest import newest

SELECT = "SELECT position, text FROM notes WHERE live AND position <= ?"


@pytest.fixture
def con() -> Any:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE notes (position BIGINT, text VARCHAR, live BOOLEAN)")
    con.execute("INSERT INTO notes SELECT 3 * i, 'note ' || i, true FROM range(1, 40) t(i)")
    yield con
    con.close()


def _ordered(con: Any, limit: int, k: int) -> list[tuple[Any, ...]]:
    return con.execute(f"{SELECT} ORDER BY position DESC LIMIT {k}", [limit]).fetchall()


CHANGES = [
    "INSERT INTO notes VALUES (200, 'a new note', true), (203, 'another', true)",
    "UPDATE notes SET live = false WHERE position IN (114, 111)",  # two of the answer's
    "UPDATE notes SET live = false WHERE position >= 90",  # every row from the hint on
    "DELETE FROM notes WHERE position = 105",
    "INSERT INTO notes SELECT 1000 + i, 'imported ' || i, true FROM range(1500) t(i)",
    "UPDATE notes SET live = false",
]


def test_each_answer_is_the_ordered_reads_as_the_rows_change(con: Any) -> None:
    kept = KeptReads()
    answers = []

    for change in ["SELECT 1", *CHANGES]:
        con.execute(change)
        for limit in (2**62, 60):
            answers.append(newest(con, kept, "notes", SELECT, [limit], 5))
            assert answers[-1] == _ordered(con, limit, 5), (change, limit)

    assert [p for p, _ in answers[0]] == [117, 114, 111, 108, 105]
    assert answers[-1] == []


def test_a_session_reads_from_where_its_last_answer_began(con: Any) -> None:
    kept, sent = KeptReads(), []
    newest(con, kept, "notes", SELECT, [2**62], 5)

    con.execute("INSERT INTO notes VALUES (200, 'a new note', true)")
    found = newest(_Spy(con.execute, sent), kept, "notes", SELECT, [2**62], 5)  # type: ignore[arg-type]

    assert found[0] == (200, "a new note") and len(found) == 5
    assert kept.hints["notes"] == 108
    assert [s for s in sent if "ORDER BY" in s] == []
    assert [s for s in sent if "position >= ?" in s]


def test_without_a_session_the_ordered_read_runs(con: Any) -> None:
    assert newest(con, None, "notes", SELECT, [2**62], 3) == _ordered(con, 2**62, 3)


class _Spy:
    """A connection that records the statements it is sent."""

    def __init__(self, execute: Any, sent: list[str]) -> None:
        self._execute, self._sent = execute, sent

    def execute(self, sql: str, params: Any = None) -> Any:
        self._sent.append(sql)
        return self._execute(sql, params)
