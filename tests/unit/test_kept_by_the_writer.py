"""A result its writer keeps (`KeptReads.keep`: the projector's tracking totals) is served
without a read until one of its tables is written again, and a read that began before it was
kept never replaces it."""

from __future__ import annotations

from mindledger.projections.engine.kept_reads import KeptReads


def test_a_result_its_writer_keeps_is_served_until_its_table_is_written() -> None:
    kept = KeptReads()
    reads: list[str] = []

    kept.keep("totals", ("tracking",), [(3, 42, 17)])

    assert kept.get("totals", ("tracking",), lambda: reads.append("read") or []) == [(3, 42, 17)]
    assert reads == []
    kept.written(("tracking",))
    assert kept.get("totals", ("tracking",), lambda: reads.append("read") or []) == []
    assert reads == ["read"]


def test_a_read_under_way_when_the_writer_keeps_its_result_does_not_replace_it() -> None:
    kept = KeptReads()

    def read_across_the_write() -> list[tuple[int, int, int]]:
        kept.keep("totals", ("tracking",), [(4, 50, 18)])  # the writer, meanwhile
        return [(3, 42, 17)]  # what the read saw before

    kept.get("totals", ("tracking",), read_across_the_write)

    assert kept.get("totals", ("tracking",), lambda: []) == [(4, 50, 18)]
