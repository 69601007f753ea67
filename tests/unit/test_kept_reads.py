"""`KeptReads` keeps a read's result until one of the tables it read is written, and never
keeps a result read while a write happened."""

from __future__ import annotations

import _duckdb as duckdb
import pytest

from mindledger.projections.engine import kept_reads
from mindledger.projections.engine.handlers import Rows
from mindledger.projections.engine.kept_reads import KeptReads, may_match, written_by


def test_a_kept_result_is_read_once_until_one_of_its_tables_is_written() -> None:
    kept, reads = KeptReads(), []

    def read() -> list[str]:
        reads.append(1)
        return ["Echo"]

    first = kept.get("name", ("identity",), read)
    kept.written({"messages", "turns"})
    second = kept.get("name", ("identity",), read)
    kept.written({"identity"})
    third = kept.get("name", ("identity",), read)

    assert first == second == third == ["Echo"]
    assert len(reads) == 2


def test_a_result_read_while_a_write_happened_is_not_kept() -> None:
    kept, reads = KeptReads(), []

    def read_during_a_write() -> str:
        reads.append(1)
        kept.written({"messages"})  # another table: the read may still have seen it half-done
        return "Echo"

    kept.get("name", ("identity",), read_during_a_write)
    kept.get("name", ("identity",), read_during_a_write)

    assert len(reads) == 2


def test_everything_is_dropped_when_the_writes_are_not_known() -> None:
    kept = KeptReads()
    kept.get("name", ("identity",), lambda: "Echo")

    kept.written()

    assert kept.get("name", ("identity",), lambda: "Nova") == "Nova"


def test_a_batch_names_its_tables_and_the_kinds_of_documents_it_indexes() -> None:
    rows = Rows({"commitments": {}})
    rows.append("config_changes", {"key": "threads.top_k"})
    rows.docs[1].extend(["message", "message"])

    written = written_by(rows)
    rows.superseded.append(7)

    assert {"events", "tracking", "commitments", "config_changes", "docs.message"} <= written
    assert "docs.commitment" not in written and "docs.live" not in written
    assert "docs.live" in written_by(rows)


def test_a_lookup_is_skipped_only_when_the_kept_values_hold_none_of_its_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE names AS SELECT * FROM (VALUES ('garden'), ('roof')) t(key)")
    kept = KeptReads()
    sql = "SELECT DISTINCT key FROM names"

    assert may_match(con, kept, sql, ("names",), ["roof", "sky"])
    assert not may_match(con, kept, sql, ("names",), ["sky"])
    assert may_match(con, None, sql, ("names",), ["sky"])  # nothing kept: the lookup decides
    monkeypatch.setattr(kept_reads, "MAY_MATCH_VALUES", 1)
    kept.written({"names"})
    assert may_match(con, kept, sql, ("names",), ["sky"])  # too many to keep: always looked up
