"""The web page's knowledge reads (`service/web/views.py`), on a DuckDB in memory: the view
appears only when the knowledge issue's tables are there, and shows them as they stand."""

from __future__ import annotations

import duckdb

from mindledger.projections.queries import web_views as views


def test_without_knowledge_tables_there_is_no_knowledge_view() -> None:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE threads (id VARCHAR)")

    assert views.knowledge_tables(con) == []
    assert views.knowledge(con) == {}


def test_knowledge_tables_are_shown_newest_first_with_their_columns() -> None:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE knowledge (item_id VARCHAR, answer VARCHAR, confidence_ppm BIGINT)")
    con.execute("INSERT INTO knowledge VALUES ('k1', 'Paris', 950000)")
    con.execute("CREATE TABLE knowledge_revisions (position BIGINT, item_id VARCHAR, role VARCHAR)")
    con.execute("INSERT INTO knowledge_revisions VALUES (7, 'k1', 'model'), (9, 'k1', 'owner')")

    shown = views.knowledge(con)

    assert views.knowledge_tables(con) == ["knowledge", "knowledge_revisions"]
    assert shown["knowledge"] == {
        "columns": ["item_id", "answer", "confidence_ppm"],
        "rows": [{"item_id": "k1", "answer": "Paris", "confidence_ppm": 950000}],
    }
    assert [r["role"] for r in shown["knowledge_revisions"]["rows"]] == ["owner", "model"]
