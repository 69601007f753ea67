"""A catch-up pauses the cyclic garbage collector while it runs and always turns it back on."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mindledger.compose import Home, open_reader
from mindledger.projections.engine.gc_pause import paused_gc
from mindledger.projections.engine.projector import Projector
from tests.integration.ledger_factory import sqlite_mind

WAIT_S = 120  # a deadline for a busy machine, never a timing threshold


class WatchingReader:
    """The real reader, noting whether the collector was on each time a row was read."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.seen: list[bool] = []

    def rows(self, after: int = 0, batch: int = 5000, stop: int | None = None) -> Iterator[Any]:
        for row in self.reader.rows(after=after, batch=batch, stop=stop):
            self.seen.append(gc.isenabled())
            yield row

    def open_states(self, rows: Any, skip: frozenset[str] = frozenset()) -> Any:
        return self.reader.open_states(rows, skip)


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[WatchingReader]:
    sqlite_mind(tmp_path / "mind", commands=4)
    real = open_reader(Home(tmp_path / "mind"))
    yield WatchingReader(real)
    real.close()


def test_a_catch_up_runs_with_the_collector_paused_and_turns_it_back_on(
    reader: WatchingReader, tmp_path: Path
) -> None:
    projector = Projector(tmp_path / "rm.duckdb")

    applied = projector.catch_up(reader, batch=3)
    projector.close()

    assert applied == len(reader.seen) > 3
    assert reader.seen == [False] * applied
    assert gc.isenabled()


def test_a_failing_catch_up_still_turns_the_collector_back_on(
    reader: WatchingReader, tmp_path: Path
) -> None:
    projector = Projector(tmp_path / "rm.duckdb")
    projector.apply_read = lambda *_: 1 / 0  # type: ignore[method-assign,assignment,misc]

    with pytest.raises(ZeroDivisionError):
        projector.catch_up(reader)
    projector.close()

    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()

        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_turn_the_collector_on_when_the_last_one_ends() -> None:
    first_in, first_may_end = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with paused_gc():
            first_in.set()
            first_may_end.wait(WAIT_S)
            seen["first_before_end"] = gc.isenabled()

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(WAIT_S)
    with paused_gc():
        pass
    seen["after_second"] = gc.isenabled()
    first_may_end.set()
    thread.join(WAIT_S)
    assert not thread.is_alive()

    assert seen == {"first_before_end": False, "after_second": False}
    assert gc.isenabled()
