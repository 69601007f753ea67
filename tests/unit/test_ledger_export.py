"""The export line format: decoded state rebuilt byte for byte, raw bytes when it cannot be."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.export_check import ExportInvalidError, ExportReader
from adapters.hash_chain import ChainRow, content_hash, genesis_hash, link_hash
from adapters.ledger_export import Genesis, export_lines, render_state, state_bytes

GENESIS = Genesis(
    "ledger-1", "2026-05-01T09:00:00+00:00", genesis_hash("ledger-1", "2026-05-01T09:00:00+00:00")
)
AGGREGATE = "0b0bea2c290a51dc9fc6cd5dff6bbc84"


def _rows(states: list[bytes]) -> list[ChainRow]:
    rows, prev = [], GENESIS.genesis
    for i, state in enumerate(states, 1):
        content = content_hash("mind.x", AGGREGATE, i, state)
        prev = link_hash(prev, content)
        rows.append(ChainRow(i, content, prev, "mind.x", AGGREGATE, i, state))
    return rows


def _read_back(states: list[bytes]) -> list[bytes]:
    rows = _rows(states)
    data = b"".join(export_lines(GENESIS, rows, len(rows), rows[-1].hash if rows else None))
    return [e.state for e in ExportReader(io.BytesIO(data)).events()]


def test_a_canonical_state_is_shown_decoded_with_its_time_and_schema() -> None:
    state = b'{"_schema":2,"text":"hi","timestamp":"2026-05-01T09:00:00Z"}'

    rendered = render_state(state)

    assert rendered == {"schema": 2, "time": "2026-05-01T09:00:00Z", "payload": {"text": "hi"}}
    assert state_bytes(rendered["payload"], rendered["time"], 2) == state


@pytest.mark.parametrize(
    "state",
    [
        b'{"timestamp": "2026-05-01T09:00:00Z", "text": "spaced"}',  # not canonical
        b'{"text":"no time"}',
        b"\xff\xfe not json",
        b'{"_schema":true,"timestamp":"t"}',
        b"",
    ],
)
def test_a_state_that_does_not_rebuild_is_carried_as_raw_bytes(state: bytes) -> None:
    assert "state_b64" in render_state(state)
    assert _read_back([state]) == [state]


@given(st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3), max_size=4))
def test_every_exported_state_reads_back_as_the_same_bytes(payloads: list[dict[str, str]]) -> None:
    states = [state_bytes(p, "2026-05-01T09:00:00Z", 1) for p in payloads]

    assert _read_back(states) == states


def test_an_empty_file_is_refused_at_line_one(tmp_path: Path) -> None:
    with pytest.raises(ExportInvalidError) as refused:
        ExportReader(io.BytesIO(b""))

    assert refused.value.line == 1
