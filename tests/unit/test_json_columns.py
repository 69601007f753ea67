"""A JSON column's text as the projector writes it (`handlers.json_text`: a turn's context,
usage and rejections, a claim's payload) reads back as the same value, of the same types, as
the json module's spelling did: orjson's where it spells the value, json's where it refuses."""

from __future__ import annotations

import json
from typing import Any

import _duckdb as duckdb
from hypothesis import given, settings

from mindledger.projections.engine.handlers import json_text
from tests.unit.json_values import VALUES, typed


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_a_json_columns_text_reads_back_as_the_json_modules_spelling_did(value: Any) -> None:
    assert typed(json.loads(json_text(value))) == typed(json.loads(json.dumps(value)))


def test_what_orjson_cannot_spell_is_written_by_json() -> None:
    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]

    assert json_text({"n": 2**64}) == json.dumps({"n": 2**64})
    assert json_text(deep) == json.dumps(deep)


def test_duckdb_takes_the_text_as_json() -> None:
    value = [{"kind": "message", "reason": "über the token budget", "score": 0.25, "n": 2**64}]
    con = duckdb.connect(":memory:")
    try:
        con.execute("CREATE TABLE t (j JSON)")
        con.execute("INSERT INTO t VALUES (?)", [json_text(value)])
        con.execute("INSERT INTO t VALUES (?)", [json_text(value[0] | {"n": 7})])
        reasons = con.execute("SELECT j->>'$[0].reason', j->>'$.reason' FROM t").fetchall()
    finally:
        con.close()
    assert reasons == [("über the token budget", None), (None, "über the token budget")]
