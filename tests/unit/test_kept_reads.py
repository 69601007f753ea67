"""`KeptReads` keeps a read's result until one of the tables it read is written, and never
keeps a result read while a write happened."""

from __future__ import annotations

from mindledger.projections.engine.handlers import Rows
from mindledger.projections.engine.kept_reads import KeptReads, written_by


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
