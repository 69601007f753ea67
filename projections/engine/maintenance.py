"""The projector's maintenance, run after the catch-ups of the follower, `mind project` and
replay (never inside a reader's or a turn's: it costs time in proportion to the mind's size)."""

from __future__ import annotations

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.duckdb_files import arrow_scans, commit
from mindledger.projections.retrieval import bm25

# The term index is re-sorted once this many of its rows, and this fraction, are unsorted.
SORT_MIN_ROWS = 200_000
SORT_FRACTION = 0.2


def sort_term_index(con: duckdb.DuckDBPyConnection) -> None:
    """Rewrite `doc_terms` ordered by term once more than a fifth of it is unsorted: the
    BM25 query then reads only the row groups of its terms (min/max pruning). At 1M events
    the scan of the postings went from 35 ms to 3 ms; the sort took 2.8 s. The terms with
    many postings are counted once here (`term_counts`), then kept current per batch."""
    ((unsorted, total),) = con.execute(
        "SELECT (SELECT unsorted FROM tracking WHERE name = 'main'), "
        "(SELECT count(*) FROM doc_terms)"
    ).fetchall()
    if unsorted < max(SORT_MIN_ROWS, total * SORT_FRACTION):
        return
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            "CREATE TABLE doc_terms_sorted AS SELECT * FROM doc_terms ORDER BY term, position"
        )
        con.execute("DROP TABLE doc_terms")
        con.execute("ALTER TABLE doc_terms_sorted RENAME TO doc_terms")
        con.execute("UPDATE tracking SET unsorted = 0 WHERE name = 'main'")
        con.execute("DELETE FROM term_counts")
        con.execute(
            "INSERT INTO term_counts SELECT term, count(*) FROM doc_terms GROUP BY term "
            f"HAVING count(*) > {int(bm25.TRACKED_POSTINGS)}"
        )
        commit(con)
    except BaseException:
        con.execute("ROLLBACK")
        raise


def refresh_tension(con: duckdb.DuckDBPyConnection) -> None:
    """Write each thread's tension as of the last projected event's time, so the table
    shows tension as of the projection (the same after replay)."""
    from mindledger.projections.queries.thread_queries import ranked

    last = con.execute(
        "SELECT time FROM events WHERE position = (SELECT max(position) FROM events)"
    ).fetchall()
    count = con.execute("SELECT count(*) FROM threads").fetchall()
    if not last or not count[0][0]:
        return
    import pyarrow as pa  # maintenance runs after a catch-up of many events, never a reader's

    as_of = last[0][0]
    rows = ranked(con, as_of, include_resolved=True)
    data = pa.table(
        {
            "stream_id": [r["stream_id"] for r in rows],
            "tension": [r["tension"] for r in rows],
        }
    )
    arrow_scans()
    con.register("_tension", data)
    try:
        con.execute(
            "UPDATE threads SET tension = _tension.tension, tension_as_of = ? "
            "FROM _tension WHERE threads.stream_id = _tension.stream_id",
            [as_of],
        )
    finally:
        con.unregister("_tension")
