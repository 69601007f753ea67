"""A sealed field's JSON (`sealing.plain_json`) opens to the same value, of the same types, as
the json module's spelling did, for every JSON value a model dumps: orjson's where it can
spell it, json's where orjson refuses (integers past 64 bits, deep nesting)."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given, settings

from mindledger.adapters.sealing import plain_json
from tests.unit.json_values import VALUES, typed


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_a_sealed_fields_json_opens_to_what_the_json_modules_spelling_opened_to(
    value: Any,
) -> None:
    before = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    after = plain_json(value)

    try:
        opened_before = orjson.loads(before)  # as a sealed field is opened
    except orjson.JSONDecodeError:  # what the opener refuses is spelled as it was
        assert after == before.encode()
        return
    assert typed(orjson.loads(after)) == typed(opened_before)


def test_an_integer_orjson_cannot_spell_is_written_by_json() -> None:
    assert plain_json({"n": 2**64}) == b'{"n":18446744073709551616}'


def test_nesting_deeper_than_orjson_goes_is_written_by_json() -> None:
    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]

    assert plain_json(deep) == ("[" * 300 + '"leaf"' + "]" * 300).encode()


def test_a_context_of_records_is_written_by_orjson_with_sorted_keys() -> None:
    records = [{"score": 0.25, "kind": "message", "day": None, "id": 7}]

    assert plain_json(records) == orjson.dumps(records, option=orjson.OPT_SORT_KEYS)
    assert plain_json(records) == b'[{"day":null,"id":7,"kind":"message","score":0.25}]'
