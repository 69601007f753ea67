"""The speaker vector channel's named participants and their latest positions
(`projections.retrieval.speakers.latest_said_by`) are kept per mind while its read model's
tracked position stands, and read again once it moves."""

from __future__ import annotations

import duckdb

from mindledger.projections.retrieval.names import name_key
from mindledger.projections.retrieval.speakers import latest_said_by


def model() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE conversations (participants VARCHAR[])")
    con.execute("INSERT INTO conversations VALUES (['Ana', 'Ben'])")
    con.execute("CREATE TABLE messages (position BIGINT, speaker VARCHAR)")
    con.execute("INSERT INTO messages VALUES (1, 'Ana'), (2, 'Ben'), (3, 'Ana'), (4, 'Cy')")
    con.execute("CREATE TABLE tracking (position BIGINT)")
    con.execute("INSERT INTO tracking VALUES (4)")
    return con


def test_kept_while_the_read_model_stands_and_read_again_when_it_moves() -> None:
    con = model()
    ana = {name_key("Ana")}
    expected = (["Ana"], [3, 1])
    assert latest_said_by(con, ana, 2**62, 10, None) == expected
    assert latest_said_by(con, ana, 2**62, 10, "/mind/a") == expected
    assert latest_said_by(con, ana, 2, 10, "/mind/a") == (["Ana"], [1])  # its own bound
    con.execute("INSERT INTO messages VALUES (5, 'Ana')")
    # The same position (not projected as a read model would): still the list kept.
    assert latest_said_by(con, ana, 2**62, 10, "/mind/a") == expected
    assert latest_said_by(con, ana, 2**62, 10, "/mind/b") == (["Ana"], [5, 3, 1])
    con.execute("UPDATE tracking SET position = 5")
    assert latest_said_by(con, ana, 2**62, 10, "/mind/a") == (["Ana"], [5, 3, 1])
    assert latest_said_by(con, ana, 2**62, 2, "/mind/a") == (["Ana"], [5, 3])
    assert latest_said_by(con, {name_key("Zed")}, 2**62, 10, "/mind/a") == ([], [])
