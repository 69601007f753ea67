"""The usual export line checked in one pass: it reads as the general check reads it, and a
line it does not take (any edit) is left to the general check, which names what is wrong."""

from __future__ import annotations

import io
import json
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.adapters.export_check import ExportInvalidError, ExportReader, _event
from mindledger.adapters.export_lines import usual_event
from mindledger.adapters.hash_chain import ChainRow, content_hash, genesis_hash, link_hash
from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.ledger_export import Genesis, export_lines, state_bytes
from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.adapters.sealing import seal_state
from mindledger.domain.commitment import Commitment

GENESIS = Genesis(
    "ledger-1", "2026-05-01T09:00:00+00:00", genesis_hash("ledger-1", "2026-05-01T09:00:00+00:00")
)
AGGREGATE = "0b0bea2c290a51dc9fc6cd5dff6bbc84"


def _export(extra: list[bytes] | None = None) -> list[bytes]:
    """A header and three event lines (and `extra` states): a sealed commitment (its key
    carried), one in the clear at schema 2, and one whose time has a fraction (a float's mark
    in the line, outside its payload)."""
    keys = MemoryKeyStore()
    sealed: dict[str, Any] = {"text": "Water the ficus é", "timestamp": "2026-05-01T09:00:00Z"}
    seal_state(Commitment.Opened, UUID(hex=AGGREGATE), 1, sealed, keys)
    keys.flush()
    states = [
        canonical_json(sealed),
        state_bytes({"cid": "c0123abcd", "n": [1, 2]}, "2026-05-01T09:00:01Z", 2),
        state_bytes({"note": "x"}, "2026-05-01T09:00:02.5+00:00", 1),
        *(extra or []),
    ]
    rows, prev = [], GENESIS.genesis
    for i, state in enumerate(states, 1):
        topic = Commitment.Opened.TOPIC
        content = content_hash(topic, AGGREGATE, i, state)
        prev = link_hash(prev, content)
        rows.append(ChainRow(i, content, prev, topic, AGGREGATE, i, state))
    return list(export_lines(GENESIS, rows, len(rows), prev, keys, version=2))


LINES = _export()
PREV = [GENESIS.genesis] + [json.loads(line)["hash"] for line in LINES[1:]]


@pytest.mark.parametrize("number", [2, 3, 4])
def test_a_usual_line_reads_as_the_general_check_reads_it(number: int) -> None:
    line = LINES[number - 1][:-1]

    usual = usual_event(line, number, PREV[number - 2], keyed=True)

    assert usual is not None
    assert usual == _event(line, number, PREV[number - 2], 2)


@pytest.mark.parametrize("number", [1e-05, 1e16, 1.5, [0.25]])
def test_a_line_with_a_float_in_its_payload_is_left_to_the_general_check(number: Any) -> None:
    lines = _export([state_bytes({"note": "x", "weight": number}, "2026-05-01T09:00:03Z", 1)])
    prev = json.loads(lines[3])["hash"]

    usual = usual_event(lines[4][:-1], 5, prev, keyed=True)

    assert usual is None
    assert _event(lines[4][:-1], 5, prev, 2).decoded is None  # read from the rule's bytes


def test_a_version_one_file_leaves_a_line_with_keys_to_the_general_check() -> None:
    assert usual_event(LINES[1][:-1], 2, PREV[0], keyed=False) is None


@given(st.integers(0, 10_000), st.binary(min_size=1, max_size=3), st.integers(2, 4))
def test_an_edited_line_is_taken_only_as_the_general_check_takes_it(
    at: int, replacement: bytes, number: int
) -> None:
    line = LINES[number - 1][:-1]
    at %= len(line)
    edited = line[:at] + replacement + line[at + len(replacement) :]

    usual = usual_event(edited, number, PREV[number - 2], keyed=True)

    if usual is not None:  # the edit changed nothing, or nothing `_event` refuses
        assert usual == _event(edited, number, PREV[number - 2], 2)


def test_an_edited_envelope_is_refused_at_its_line_in_the_general_check_s_words() -> None:
    line = json.loads(LINES[1])
    text = line["payload"]["text"]
    flipped = "A" if text["c"][20] != "A" else "B"
    line["payload"]["text"] = {**text, "c": text["c"][:20] + flipped + text["c"][21:]}
    data = b"".join([LINES[0], canonical_json(line) + b"\n", *LINES[2:]])

    with pytest.raises(ExportInvalidError) as refused:
        list(ExportReader(io.BytesIO(data)).events())

    assert refused.value.line == 2
    assert refused.value.reason == "the hash does not recompute (the event was changed)"
