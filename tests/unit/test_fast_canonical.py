"""orjson stands in for the canonical JSON rule only where it spells a value the same: every
value read from a line without a float (text of any code point, integers up to 64 bits,
nesting), and a line with a float always goes through the rule itself."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindledger.adapters.pydantic_mapping import (
    canonical_json,
    fast_canonical,
    has_float,
    is_canonical,
)

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
INTS = st.integers(-(2**63), 2**64 - 1)
SCALARS = st.none() | st.booleans() | INTS | TEXT
FLOATS = st.floats(allow_nan=False, allow_infinity=False)


def _values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
        max_leaves=20,
    )


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(_values(SCALARS))
def test_orjson_spells_every_value_without_a_float_as_the_rule_does(value: Any) -> None:
    assert fast_canonical(value, floatless=True) == canonical_json(value)


@SETTINGS
@given(_values(SCALARS | FLOATS), FLOATS)
def test_a_line_holding_a_float_is_seen_to_hold_one(value: Any, number: float) -> None:
    line = orjson.dumps({"v": value, "f": [number]}, option=orjson.OPT_SORT_KEYS)

    assert has_float(line)


@SETTINGS
@given(_values(SCALARS | FLOATS | st.just(math.nan)), st.sampled_from(["rule", "orjson", "spaced"]))
def test_a_line_is_canonical_exactly_when_the_rule_spells_it_so(value: Any, spelling: str) -> None:
    if spelling == "rule":
        line = canonical_json({"v": value})
    elif spelling == "orjson":
        try:
            line = orjson.dumps({"v": value}, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            line = canonical_json({"v": value})
    else:
        line = canonical_json({"v": value}).replace(b":", b": ", 1)
    obj = json.loads(line)  # what the line holds (the checker reads it first)

    assert is_canonical(obj, line)[0] == (canonical_json(obj) == line)


@SETTINGS
@given(_values(SCALARS))
def test_a_line_without_a_float_is_seen_to_hold_none_but_where_text_looks_like_one(
    value: Any,
) -> None:
    line = orjson.dumps({"v": value}, option=orjson.OPT_SORT_KEYS)

    assert not has_float(line) or b'"' in line  # only text that spells a number can


def test_text_that_spells_a_number_is_taken_for_one_but_a_time_is_not() -> None:
    assert has_float(b'{"t":"at :1.5, then"}')  # the slow way: safe
    assert not has_float(b'{"t":"2026-05-01T09:00:00.5+00:00","n":[1,-2],"w":"e-mail"}')
    assert has_float(b'{"n":[-0.5]}') and has_float(b'{"n":1e+16}') and has_float(b'{"n":5e-324}')


def test_the_floats_orjson_spells_otherwise_are_decided_by_the_rule() -> None:
    obj = {"f": 1e-05}
    orjson_line = orjson.dumps(obj)  # {"f":0.00001}

    assert orjson_line != canonical_json(obj)
    assert is_canonical(obj, orjson_line) == (False, False)
    assert is_canonical(obj, canonical_json(obj)) == (True, False)
    assert is_canonical({"t": "at 1.5, then"}, canonical_json({"t": "at 1.5, then"}))[0]
    assert is_canonical({"n": math.nan}, b'{"n":NaN}') == (True, False)  # the rule's own
