"""What a steady turn sends DuckDB to catch its kept read session up: the previous turn's
events in one transaction, a statement per table it writes (no timing: a count)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings
from mindledger.compose import Home, turn_service
from mindledger.projections.engine import readmodel
from mindledger.projections.engine.projector import Projector
from tests.integration.ledger_factory import sqlite_mind
from tests.integration.statement_log import Sent, log_statements


def test_a_steady_turns_catch_up_sends_one_call_per_table_and_one_to_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite_mind(tmp_path, commands=2)
    catch_ups: list[list[str]] = []
    apply = Projector.apply

    def recorded(self: Projector, *args: Any, **kwargs: Any) -> int:
        con, calls = self.con, []
        catch_ups.append(calls)
        self.con = Sent(con, calls)  # type: ignore[assignment]
        try:
            return apply(self, *args, **kwargs)
        finally:
            self.con = con

    monkeypatch.setattr(Projector, "apply", recorded)
    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)  # kept however slow a turn is
    with turn_service(Home(tmp_path)) as service:  # held, as a served mind holds it
        for text in ("Hello there", "Please remember the blue kettle", "And the red one"):
            model = LiteLLMModel(ModelSettings(spec="mock", mock_reply="Noted."))
            assert service.run(text, model).status == "complete"

    steady = catch_ups[-1]  # the third turn applying the second turn's events
    assert [_what(sql) for sql in steady] == [
        "BEGIN TRANSACTION; INSERT INTO events",
        "INSERT INTO turns",
        "INSERT INTO messages",
        "INSERT INTO docs",
        "INSERT INTO doc_terms",
        "UPDATE tracking",
        "SET fsync_mode = 'NONE'; COMMIT; SET fsync_mode = 'STANDARD'",
    ]


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
