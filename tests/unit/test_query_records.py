"""A query's rows as JSON objects: a float JSON cannot hold (DuckDB's 1/0, 0/0) is given by its
name, so `--json`, HTTP and MCP print valid JSON."""

from __future__ import annotations

import json
import math

from mindledger.queries import records


def test_non_finite_floats_are_named_and_the_json_is_valid() -> None:
    rows = [(math.inf, -math.inf, math.nan, 2.5, None, "x")]

    (record,) = records(["a", "b", "c", "d", "e", "f"], rows)

    assert record == {"a": "Infinity", "b": "-Infinity", "c": "NaN", "d": 2.5, "e": None, "f": "x"}
    assert json.loads(json.dumps(record, allow_nan=False)) == record
