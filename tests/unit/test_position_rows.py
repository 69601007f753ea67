"""`PositionRows` gives the rows a read at the positions gives, keeping what it read between
reads: rows appended since are read as the tail, and nothing past the read model's position is
kept as absent."""

from __future__ import annotations

from typing import Any

import _duckdb as duckdb
import pytest

from mindledger.projections.engine.kept_reads import INDEX_TOTALS, KeptReads
from mindledger.projections.retrieval import position_rows
from mindledger.projections.retrieval.position_rows import PositionRows, rows_at

SELECT = "SELECT position, text FROM notes WHERE"


@pytest.fixture
def con() -> Any:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE notes (position BIGINT, text VARCHAR)")
    con.execute("INSERT INTO notes SELECT 3 * i, 'note ' || i FROM range(1, 40) t(i)")
    yield con
    con.close()


def _direct(con: Any, positions: set[int]) -> dict[int, tuple[Any, ...]]:
    found = con.execute(f"{SELECT} position IN (SELECT unnest(?))", [sorted(positions)])
    return {r[0]: r for r in found.fetchall()}


class _Spy:
    """A connection that records the statements it is sent."""

    def __init__(self, con: Any) -> None:
        self._con, self.sent = con, []

    def execute(self, sql: str, params: Any = None) -> Any:
        self.sent.append(sql)
        return self._con.execute(sql, params)


def test_each_read_is_the_direct_reads_as_rows_are_appended(con: Any) -> None:
    kept, upto = PositionRows(SELECT), 117
    asked = [{3, 4, 5, 6}, {114, 115, 116, 117, 118}, {6, 117, 120, 121}, {1, 2, 3, 200}]

    for n, positions in enumerate(asked):
        if n == 2:  # two events projected since: one wrote a row, the other none
            assert 118 not in kept.rows  # past the read model's position when asked
            con.execute("INSERT INTO notes VALUES (120, 'a new note')")
            upto = 121
        assert kept.read(con, positions, upto) == _direct(con, {p for p in positions if p <= upto})

    assert kept.rows[4] is None and kept.rows[118] is None  # 118: with the tail, once projected
    assert 200 not in kept.rows and kept.read_to == 121


def test_a_steady_read_sends_only_the_tail(con: Any) -> None:
    kept = PositionRows(SELECT)
    kept.read(con, {111, 114, 117}, 117)
    con.execute("INSERT INTO notes VALUES (120, 'a new note')")
    spy = _Spy(con)

    again = kept.read(spy, {111, 114, 117}, 120)  # type: ignore[arg-type]
    found = kept.read(spy, {114, 117, 120}, 120)  # type: ignore[arg-type]
    more = kept.read(spy, {114, 117, 120}, 120)  # type: ignore[arg-type]

    assert again == _direct(con, {111, 114, 117})
    assert found == more == _direct(con, {114, 117, 120})
    assert spy.sent == [f"{SELECT} position > ? AND position <= ?"]


def test_a_long_tail_is_read_only_at_the_positions_wanted(
    con: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(position_rows, "TAIL_POSITIONS", 10)
    kept = PositionRows(SELECT)
    kept.read(con, {3}, 30)
    spy = _Spy(con)

    found = kept.read(spy, {6, 90, 117}, 117)  # type: ignore[arg-type]

    assert found == _direct(con, {6, 90, 117})
    assert spy.sent == [f"{SELECT} position IN (SELECT unnest(?))"]


def test_kept_rows_are_dropped_with_the_tables_that_change_them(con: Any) -> None:
    reads = KeptReads()
    reads.keep(INDEX_TOTALS, ("tracking",), [(39, 390, 117)])
    rows_at(con, reads, SELECT, ("notes.text",), {3})
    con.execute("UPDATE notes SET text = 'rewritten' WHERE position = 3")

    kept = rows_at(con, reads, SELECT, ("notes.text",), {3})
    reads.written({"notes.text"})
    read = rows_at(con, reads, SELECT, ("notes.text",), {3})

    assert kept == {3: (3, "note 1")} and read == {3: (3, "rewritten")}


def test_without_a_session_every_position_is_read(con: Any) -> None:
    assert rows_at(con, None, SELECT, (), {3, 4, 6}) == _direct(con, {3, 6})


def test_rows_are_kept_by_a_position_column_of_any_name(con: Any) -> None:
    con.execute("CREATE TABLE promises AS SELECT position AS opened_position, text FROM notes")
    select = "SELECT opened_position, text FROM promises WHERE"
    kept = PositionRows(select, "opened_position")
    kept.read(con, {3, 6}, 117)
    spy = _Spy(con)

    found = kept.read(spy, {3, 6, 9}, 117)  # type: ignore[arg-type]

    assert found == {3: (3, "note 1"), 6: (6, "note 2"), 9: (9, "note 3")}
    assert spy.sent == [f"{select} opened_position IN (SELECT unnest(?))"]
