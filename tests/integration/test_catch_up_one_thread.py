"""A bulk catch-up runs the shared DuckDB instance on one thread and always gives its pool back;
a turn-sized catch-up keeps the pool."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mindledger.compose import Home, open_reader
from mindledger.projections.engine.duckdb_files import close, connect
from mindledger.projections.engine.one_thread import one_thread
from mindledger.projections.engine.projector import FEW_ROWS, Projector
from tests.integration.ledger_factory import sqlite_mind


def _threads(con: Any) -> int:
    ((threads,),) = con.execute("SELECT current_setting('threads')").fetchall()
    return int(threads)


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[Any]:
    sqlite_mind(tmp_path / "mind", commands=24)  # more events than a turn's catch-up
    real = open_reader(Home(tmp_path / "mind"))
    yield real
    real.close()


@pytest.fixture
def projector(tmp_path: Path) -> Iterator[Projector]:
    projector = Projector(tmp_path / "rm.duckdb")
    yield projector
    projector.close()


def test_a_bulk_catch_up_runs_on_one_thread_and_gives_the_pool_back(
    reader: Any, projector: Projector
) -> None:
    pool = _threads(projector.con)
    seen: list[int] = []

    applied = projector.catch_up(reader, on_batch=lambda _: seen.append(_threads(projector.con)))

    assert applied > FEW_ROWS
    assert seen == [1]
    assert _threads(projector.con) == pool


def test_a_turn_sized_catch_up_keeps_the_pool(reader: Any, projector: Projector) -> None:
    head = reader.head()[0]
    projector.catch_up(reader, stop=head - 3)
    pool = _threads(projector.con)
    seen: list[int] = []

    applied = projector.catch_up(reader, on_batch=lambda _: seen.append(_threads(projector.con)))

    assert applied == 3
    assert seen == [pool]


def test_a_failing_bulk_catch_up_gives_the_pool_back(reader: Any, projector: Projector) -> None:
    pool = _threads(projector.con)
    projector.apply_read = lambda *_: 1 / 0  # type: ignore[method-assign,assignment,misc]

    with pytest.raises(ZeroDivisionError):
        projector.catch_up(reader)

    assert _threads(projector.con) == pool


def test_overlapping_blocks_give_the_pool_back_when_the_last_one_ends(tmp_path: Path) -> None:
    first, second = connect(tmp_path / "first.duckdb"), connect(tmp_path / "second.duckdb")
    try:
        pool = _threads(first)
        seen: dict[str, int] = {}

        with one_thread(first):
            with one_thread(second):
                seen["both"] = _threads(first)
            seen["first_alone"] = _threads(second)
        seen["none"] = _threads(first)

        assert seen == {"both": 1, "first_alone": 1, "none": pool}
    finally:
        close(first)
        close(second)


def test_a_connection_of_an_instance_of_its_own_is_left_as_it_is() -> None:
    private = connect()  # `:memory:`: not the shared instance
    try:
        pool = _threads(private)

        with one_thread(private):
            inside = _threads(private)

        assert inside == pool
    finally:
        private.close()
