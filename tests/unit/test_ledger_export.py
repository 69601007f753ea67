"""The export line format of version 2 (still read): decoded state rebuilt byte for byte, raw
bytes when it cannot be; the keys a line carries for its envelopes, each checked against them.
Version 3's own form: tests/unit/test_export_chain.py."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.adapters.export_check import ExportInvalidError, ExportReader
from mindledger.adapters.hash_chain import ChainRow, content_hash, genesis_hash, link_hash
from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.ledger_export import Genesis, export_lines, render_state, state_bytes
from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.adapters.sealing import seal_state
from mindledger.domain.commitment import Commitment

GENESIS = Genesis(
    "ledger-1", "2026-05-01T09:00:00+00:00", genesis_hash("ledger-1", "2026-05-01T09:00:00+00:00")
)
AGGREGATE = "0b0bea2c290a51dc9fc6cd5dff6bbc84"


def _rows(states: list[bytes], topic: str = "mind.x") -> list[ChainRow]:
    rows, prev = [], GENESIS.genesis
    for i, state in enumerate(states, 1):
        content = content_hash(topic, AGGREGATE, i, state)
        prev = link_hash(prev, content)
        rows.append(ChainRow(i, content, prev, topic, AGGREGATE, i, state))
    return rows


def _read_back(states: list[bytes], version: int = 2) -> list[bytes]:
    rows = _rows(states)
    head = rows[-1].hash if rows else None
    data = b"".join(export_lines(GENESIS, rows, len(rows), head, version=version))
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
    assert _read_back([state], version=3) == [state]


VALUES = st.text(max_size=5) | st.integers() | st.floats(allow_nan=False) | st.booleans()


@given(st.lists(st.dictionaries(st.text(max_size=5), VALUES, max_size=3), max_size=4))
def test_every_exported_state_reads_back_as_the_same_bytes(payloads: list[dict[str, Any]]) -> None:
    # Floats (1e-05, 1e+16), integers past 64 bits: spelled by the rule, not by orjson.
    states = [state_bytes(p, "2026-05-01T09:00:00Z", 1) for p in payloads]

    assert _read_back(states) == states
    assert _read_back(states, version=3) == states


@pytest.mark.parametrize(
    ("number", "respelled"),
    [(1e-05, b"0.00001"), (1e16, b"10000000000000000.0"), (0.5, b"5e-1"), (-0.0, b"-0.00")],
)
def test_a_number_spelled_another_way_is_refused_though_it_reads_the_same(
    number: float, respelled: bytes
) -> None:
    # The chain hashes the state the rule spells from the parsed line, so only the check of
    # the line's own spelling sees this edit (orjson spells 1e-05 as 0.00001).
    state = state_bytes({"n": number}, "2026-05-01T09:00:00Z", 1)
    rows = _rows([state])
    lines = list(export_lines(GENESIS, rows, 1, rows[-1].hash, version=2))
    spelled = json.dumps(number).encode()
    assert b'"n":' + spelled in lines[1]
    lines[1] = lines[1].replace(b'"n":' + spelled, b'"n":' + respelled)

    with pytest.raises(ExportInvalidError) as refused:
        list(ExportReader(io.BytesIO(b"".join(lines))).events())

    assert (refused.value.line, refused.value.reason) == (
        2,
        "not in canonical form (the line was edited)",
    )


def test_an_empty_file_is_refused_at_line_one(tmp_path: Path) -> None:
    with pytest.raises(ExportInvalidError) as refused:
        ExportReader(io.BytesIO(b""))

    assert refused.value.line == 1


def _sealed_rows(keys: MemoryKeyStore) -> list[ChainRow]:
    """Two commitment events; the first one's `text` sealed under a key in `keys`."""
    state: dict[str, Any] = {"text": "Water the ficus", "timestamp": "2026-05-01T09:00:00Z"}
    seal_state(Commitment.Opened, UUID(hex=AGGREGATE), 1, state, keys)
    keys.flush()
    plain = state_bytes({"n": 2}, "2026-05-01T09:00:01Z", 1)
    return _rows([canonical_json(state), plain], Commitment.Opened.TOPIC)


def _export(rows: list[ChainRow], keys: MemoryKeyStore) -> list[bytes]:
    return list(export_lines(GENESIS, rows, len(rows), rows[-1].hash, keys, version=2))


def test_an_event_line_carries_the_keys_of_its_envelopes_and_reads_back_with_them() -> None:
    keys = MemoryKeyStore()
    rows = _sealed_rows(keys)
    ((key_id, key),) = keys.keys.items()

    lines = _export(rows, keys)

    first, second = (json.loads(line) for line in lines[1:])
    assert first["keys"] == {key_id.hex(): base64.b64encode(key).decode()}
    assert set(first["payload"]["text"]) == {"$sealed", "c"}
    assert "keys" not in second
    events = list(ExportReader(io.BytesIO(b"".join(lines))).events())
    assert [e.keys for e in events] == [{key_id: key}, {}]
    assert [e.state for e in events] == [r.state for r in rows]


def test_an_envelope_whose_key_is_gone_is_exported_without_keys() -> None:
    keys = MemoryKeyStore()
    rows = _sealed_rows(keys)
    carried = json.loads(_export(rows, keys)[1])
    keys.keys.clear()

    lines = _export(rows, keys)

    del carried["keys"]
    assert lines[1] == canonical_json(carried) + b"\n"
    assert [e.keys for e in ExportReader(io.BytesIO(b"".join(lines))).events()] == [{}, {}]


KEY_ID = "00112233445566778899aabbccddeeff"


@pytest.mark.parametrize(
    ("carried", "reason"),
    [
        ({}, "keys is not an object of key ids"),
        ([], "keys is not an object of key ids"),
        ({KEY_ID.upper(): "x"}, f"key id '{KEY_ID.upper()}' is not 32 hex digits"),
        ({KEY_ID[:30]: "x"}, f"key id '{KEY_ID[:30]}' is not 32 hex digits"),
        ({KEY_ID: base64.b64encode(b"k" * 16).decode()}, f"key {KEY_ID} is not 32 bytes"),
        ({KEY_ID: base64.b64encode(b"k" * 32).decode()[:-1]}, f"key {KEY_ID} is not 32 bytes"),
        ({KEY_ID: 7}, f"key {KEY_ID} is not 32 bytes in base64"),
        ({KEY_ID: base64.b64encode(b"k" * 32).decode()}, f"key {KEY_ID} opens no sealed field"),
        ("the key", "does not open the sealed field 'text' (changed?)"),
    ],
)
def test_a_carried_key_that_is_malformed_or_does_not_open_is_refused_at_its_line(
    carried: Any, reason: str
) -> None:
    keys = MemoryKeyStore()
    lines = _export(_sealed_rows(keys), keys)
    line = json.loads(lines[1])
    if carried == "the key":  # the right id, another key
        (id_hex,) = line["keys"]
        carried = {id_hex: base64.b64encode(bytes(32)).decode()}
    lines[1] = canonical_json({**line, "keys": carried}) + b"\n"

    with pytest.raises(ExportInvalidError) as refused:
        list(ExportReader(io.BytesIO(b"".join(lines))).events())

    assert refused.value.line == 2
    assert reason in refused.value.reason


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        (4, "not a mindledger export of version 1, 2 or 3"),
        (True, "not a mindledger export (format field)"),
        (1.0, "not a mindledger export (format field)"),
    ],
)
def test_a_header_of_an_unknown_version_is_refused(version: object, reason: str) -> None:
    header = json.loads(_export(_rows([state_bytes({}, "t", 1)]), MemoryKeyStore())[0])
    line = canonical_json({**header, "version": version}) + b"\n"

    with pytest.raises(ExportInvalidError) as refused:
        ExportReader(io.BytesIO(line))

    assert (refused.value.line, refused.value.reason) == (1, reason)
