"""What a steady turn sends DuckDB to catch its kept read session up: the previous turn's
events in one transaction, a statement per table it writes (no timing: a count)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings
from mindledger.compose import Home, open_reader, turn_service
from mindledger.projections.engine import readmodel
from mindledger.projections.engine.projector import Projector, table_names
from tests.integration.ledger_factory import sqlite_mind
from tests.integration.statement_log import Sent, log_statements


def test_a_steady_turns_catch_up_sends_one_call_per_table_and_one_to_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite_mind(tmp_path, commands=2)
    catch_ups: list[list[str]] = []
    planned_after: list[bool] = []  # the connection's optimizer once each catch-up is done
    apply = Projector.apply

    def recorded(self: Projector, *args: Any, **kwargs: Any) -> int:
        con, calls = self.con, []
        catch_ups.append(calls)
        self.con = Sent(con, calls)  # type: ignore[assignment]
        try:
            return apply(self, *args, **kwargs)
        finally:
            self.con = con
            planned_after.append(_optimizer_on(con))

    monkeypatch.setattr(Projector, "apply", recorded)
    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)  # kept however slow a turn is
    with turn_service(Home(tmp_path)) as service:  # held, as a served mind holds it
        for text in ("Hello there", "Please remember the blue kettle", "And the red one"):
            model = LiteLLMModel(ModelSettings(spec="mock", mock_reply="Noted."))
            assert service.run(text, model).status == "complete"

    steady = catch_ups[-1]  # the third turn applying the second turn's events
    assert [_what(sql) for sql in steady] == [
        # Without DuckDB's optimizer, on this connection only (projector.UNPLANNED),
        "SET SESSION enable_optimizer = false; BEGIN TRANSACTION; INSERT INTO events",
        "INSERT INTO turns",
        "INSERT INTO messages",
        "INSERT INTO docs",
        "INSERT INTO doc_terms",
        "UPDATE tracking",
        # and with it again from the commit on.
        "SET fsync_mode = 'NONE'; COMMIT; SET fsync_mode = 'STANDARD'; "
        "RESET SESSION enable_optimizer",
    ]
    assert planned_after and all(planned_after)  # recall's reads after it are planned


def _optimizer_on(con: Any) -> bool:
    ((on,),) = con.execute("SELECT current_setting('enable_optimizer')").fetchall()
    return bool(on)


def test_a_small_batch_that_fails_leaves_its_connection_planned_and_nothing_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home(tmp_path)
    sqlite_mind(tmp_path, commands=2)
    reader = open_reader(home)
    projector = Projector(tmp_path / "rm.duckdb")
    try:

        def failing(self: Projector, *args: Any) -> list[int]:
            raise RuntimeError("the disk went away")  # after the events' insert, unplanned

        with monkeypatch.context() as patched:
            patched.setattr(Projector, "_write_index", failing)
            with pytest.raises(RuntimeError, match="disk went away"):
                projector.catch_up(reader, batch=4)

        assert projector.position() == 0
        assert _optimizer_on(projector.con)
        assert projector.con.execute("SELECT count(*) FROM events").fetchall() == [(0,)]
        applied = projector.catch_up(reader, batch=4)  # then as if nothing had happened
        assert applied == reader.head()[0] == projector.position()
        assert _optimizer_on(projector.con)
    finally:
        projector.close()
        reader.close()


def test_a_bulk_batch_is_planned_throughout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home(tmp_path)
    sqlite_mind(tmp_path, commands=30)  # ~90 events: more than a small batch
    reader = open_reader(home)
    projector = Projector(tmp_path / "rm.duckdb")
    calls: list[str] = []
    monkeypatch.setattr(projector, "con", Sent(projector.con, calls))
    try:
        assert projector.catch_up(reader) == reader.head()[0] > 50  # in one batch
    finally:
        projector.close()
        reader.close()
    assert calls and not [sql for sql in calls if "enable_optimizer" in sql]


def _what(sql: str) -> str:
    """A call's statements up to the table each writes."""
    found = re.match(r"(.*?(?:INSERT INTO|UPDATE) \w+)", sql)
    return found.group(1) if found else sql


def test_a_steady_turn_reads_no_index_counts_its_projector_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.projections.retrieval import bm25

    monkeypatch.setattr(bm25, "SMALL_DOCS", 0)  # scored as a large mind's: its common terms too
    log = log_statements(monkeypatch)
    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)
    sqlite_mind(tmp_path, commands=2)
    with turn_service(Home(tmp_path)) as service:
        for text in ("Hello there", "Please remember the blue kettle", "And the red one"):
            log.clear()
            model = LiteLLMModel(ModelSettings(spec="mock", mock_reply="Noted."))
            outcome = service.run(text, model)
            assert outcome.status == "complete"

    assert [sql for sql in log if "FROM tracking" in sql] == []  # BM25's N and average length
    assert [sql for sql in log if "FROM term_counts" in sql] == []  # its common terms' counts
    assert any("UPDATE tracking" in sql for sql in log)  # written, as every batch writes it
    assert any(item["kind"] == "message" for item in outcome.context)  # found lexically


def test_small_batches_find_rows_planned_and_store_what_one_planned_batch_stores(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path)
    sqlite_mind(tmp_path, commands=12)  # commitments opened, then closed in later batches
    reader = open_reader(home)
    small, whole = Projector(tmp_path / "small.duckdb"), Projector(tmp_path / "whole.duckdb")
    calls: list[str] = []
    small.con = Sent(small.con, calls)  # type: ignore[assignment]
    try:
        small.catch_up(reader, batch=4)  # small batches, their statements unplanned
        whole.catch_up(reader)  # one batch, planned throughout
        tables = [t for t in table_names() if t != "tracking"]
        for table in tables:
            query = f"SELECT * FROM {table} ORDER BY ALL"
            assert small.con.execute(query).fetchall() == whole.con.execute(query).fetchall()
    finally:
        small.close()
        whole.close()
        reader.close()
    finding = [i for i, c in enumerate(calls) if re.search(r"UPDATE (commitments|docs)", c)]
    assert any("UPDATE commitments" in calls[i] for i in finding)  # a close: found by its key
    assert any("UPDATE docs" in calls[i] for i in finding)  # the closed one's document
    for at in finding:  # each with the optimizer on (the first of a batch turns it on)
        begun = max(i for i, c in enumerate(calls[: at + 1]) if "BEGIN TRANSACTION" in c)
        assert any(c.startswith("RESET SESSION enable_optimizer; ") for c in calls[begun : at + 1])
