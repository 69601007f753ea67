"""Export version 3: the integrity check (`ExportReader.chain`, adapters/export_chain.py) refuses
any byte changed, deleted or inserted, any line moved, dropped or repeated and any cut, at the
line where it is; what it leaves to the deep check (a carried key's characters) the deep check
and the import refuse. The slicing check and the whole-line reading agree on every line."""

from __future__ import annotations

import io
import json
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindledger.adapters import export_chain
from mindledger.adapters.export_check import ExportInvalidError, ExportReader
from mindledger.adapters.export_form import event_line, verbatim
from mindledger.adapters.hash_chain import ChainRow, content_hash, genesis_hash, link_hash
from mindledger.adapters.key_store import MemoryKeyStore
from mindledger.adapters.ledger_export import Genesis, export_lines, header_line, state_bytes
from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.adapters.sealing import seal_state
from mindledger.domain.commitment import Commitment

GENESIS = Genesis(
    "ledger-3", "2026-12-05T08:00:00+00:00", genesis_hash("ledger-3", "2026-12-05T08:00:00+00:00")
)
AGGREGATE = "0b0bea2c290a51dc9fc6cd5dff6bbc84"
BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _rows(events: list[tuple[str, bytes]]) -> list[ChainRow]:
    rows, prev = [], GENESIS.genesis
    for position, (topic, state) in enumerate(events, 1):
        content = content_hash(topic, AGGREGATE, position, state)
        prev = link_hash(prev, content)
        rows.append(ChainRow(position, content, prev, topic, AGGREGATE, position, state))
    return rows


def _file() -> tuple[bytes, list[tuple[int, int]]]:
    """An export of twelve events (sealed text with its key, plain states, a state carried as
    base64, a topic with a quote and one with an accent), and where each line's key
    characters are: (start, end) byte ranges of the file."""
    keys = MemoryKeyStore()
    sealed: dict[str, Any] = {"text": "Water the ficus", "timestamp": "2026-12-05T08:00:00Z"}
    seal_state(Commitment.Opened, UUID(hex=AGGREGATE), 1, sealed, keys)
    keys.flush()
    events = [(Commitment.Opened.TOPIC, canonical_json(sealed))]
    events += [
        ("mind.thread.opened", state_bytes({"n": i, "label": f"why {i}?"}, "2026-12-05Z", 1))
        for i in range(8)
    ]
    events += [
        ("mind.x", b"\xff not json"),
        ('mind."quoted"', state_bytes({"f": 1.5}, "t", 2)),
        ("mind.caf\u00e9", state_bytes({}, "t", 1)),
    ]
    rows = _rows(events)
    data = b"".join(export_lines(GENESIS, rows, len(rows), rows[-1].hash, keys))
    ranges = []
    for key_id in keys.keys:
        at = data.index(b'"%s":"' % key_id.hex().encode())
        ranges += [(at + 1, at + 33), (at + 36, at + 79)]  # the id, the key's first 43
    return data, ranges


DATA, KEY_CHARACTERS = _file()
LINE_STARTS = [0] + [i + 1 for i, b in enumerate(DATA) if b == 0x0A]


def _line_of(offset: int) -> int:
    """The file's line number (1: the header) holding byte `offset`."""
    return sum(1 for start in LINE_STARTS if start <= offset)


def _chain(data: bytes) -> Any:
    return ExportReader(io.BytesIO(data)).chain()


def _refused_at(data: bytes) -> int:
    with pytest.raises(ExportInvalidError) as refused:
        _chain(data)
    return refused.value.line


def _deep(data: bytes) -> list[Any]:
    return list(ExportReader(io.BytesIO(data)).events())


def test_the_file_passes_both_checks_with_the_same_head() -> None:
    checked = _chain(DATA)

    assert (checked.events, checked.head) == (12, json.loads(DATA.splitlines()[0])["head"])
    assert [e.hash for e in _deep(DATA)][-1] == checked.head
    assert b'"state_b64":"' in DATA and b'"mind.\\"quoted\\""' in DATA


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(DATA) - 1), st.integers(0, 255))
def test_a_changed_byte_is_refused_at_its_line(offset: int, byte: int) -> None:
    if DATA[offset] == byte:
        return
    in_a_key = any(start <= offset < end for start, end in KEY_CHARACTERS)
    if in_a_key and byte in BASE64:
        return  # a key's characters: the deep check's (below)
    changed = DATA[:offset] + bytes([byte]) + DATA[offset + 1 :]

    line = _refused_at(changed)

    if _line_of(offset) > 1:  # a header edit shows where the file disagrees with it
        assert line == _line_of(offset)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(DATA) - 1))
def test_a_deleted_byte_is_refused_at_its_line(offset: int) -> None:
    line = _refused_at(DATA[:offset] + DATA[offset + 1 :])

    if _line_of(offset) > 1:
        assert line == _line_of(offset)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, len(DATA)), st.integers(0, 255))
def test_an_inserted_byte_is_refused_at_its_line(offset: int, byte: int) -> None:
    changed = DATA[:offset] + bytes([byte]) + DATA[offset:]
    if offset == len(DATA) and chr(byte).isspace():
        return  # blank space after the last line: an editor's, allowed
    if byte == 0x0A and DATA[offset - 1] == 0x0A:
        return  # an empty line between two: refused as blank, below

    line = _refused_at(changed)

    if _line_of(offset) > 1:  # (the end of the file: the line the byte makes)
        assert line == _line_of(offset)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, len(DATA) - 1))
def test_a_cut_is_refused_at_the_first_line_it_loses(offset: int) -> None:
    line = _refused_at(DATA[:offset])

    assert line == _line_of(offset)


@pytest.mark.parametrize("at", range(2, 13))
def test_a_line_moved_dropped_or_repeated_is_refused_at_its_place(at: int) -> None:
    lines = DATA.splitlines(keepends=True)
    swapped = [*lines[: at - 1], lines[at], lines[at - 1], *lines[at + 1 :]]
    dropped = lines[: at - 1] + lines[at:]
    repeated = lines[:at] + lines[at - 1 :]

    assert _refused_at(b"".join(swapped)) == at
    assert _refused_at(b"".join(dropped)) == at
    assert _refused_at(b"".join(repeated)) == at + 1


def test_an_anchor_is_found_at_its_position_and_the_genesis_at_zero() -> None:
    hashes = [json.loads(line)["hash"] for line in DATA.splitlines()[1:]]

    found = [ExportReader(io.BytesIO(DATA)).chain(h).anchor_position for h in hashes]

    assert found == list(range(1, 13))
    assert ExportReader(io.BytesIO(DATA)).chain(GENESIS.genesis).anchor_position == 0
    assert ExportReader(io.BytesIO(DATA)).chain("ab" * 32).anchor_position is None


def test_a_blank_line_between_two_is_refused_at_it() -> None:
    lines = DATA.splitlines(keepends=True)

    assert _refused_at(b"".join([*lines[:4], b"\n", *lines[4:]])) == 5


@pytest.mark.parametrize("which", [0, 1])
def test_a_key_character_changed_passes_the_chain_and_fails_the_deep_check(which: int) -> None:
    start, _ = KEY_CHARACTERS[which]
    replacement = b"0" if DATA[start] != ord("0") else b"1"
    changed = DATA[:start] + replacement + DATA[start + 1 :]

    assert _chain(changed).events == 12
    with pytest.raises(ExportInvalidError) as refused:
        _deep(changed)

    assert refused.value.line == 2


@pytest.mark.parametrize(
    "state",
    [b'{"a":1}', b"{}", b'{"a": [1, 2.5e-7, "\\u00e9"]}', b'{"x":"\xc3\xa9"}'],
)
def test_a_json_object_on_one_line_is_carried_verbatim(state: bytes) -> None:
    line = event_line(1, AGGREGATE, "mind.x", 1, state, {}, GENESIS.genesis, "0" * 64)

    assert verbatim(state) and b'"state":' + state + b',"position":1,' in line


@pytest.mark.parametrize(
    "state", [b"[1]", b'{"a":\n1}', b"\xff", b' {"a":1}', b'{"a":NaN}', b'{"a":1} ', b""]
)
def test_anything_else_is_carried_as_base64(state: bytes) -> None:
    assert not verbatim(state)
    assert _deep(_export([state]))[0].state == state
    assert _chain(_export([state])).events == 1


def _export(states: list[bytes], topic: str = "mind.x") -> bytes:
    rows = _rows([(topic, s) for s in states])
    return b"".join(export_lines(GENESIS, rows, len(rows), rows[-1].hash))


TOPICS = st.text(min_size=1, max_size=8)
STATES = st.binary(max_size=30) | st.dictionaries(
    st.text(max_size=4), st.integers() | st.text(max_size=4) | st.floats(allow_nan=False)
).map(lambda d: state_bytes(d, "2026-12-05T08:00:00Z", 1))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(TOPICS, STATES), min_size=1, max_size=5))
def test_the_chain_check_and_the_whole_line_reading_agree(events: list[tuple[str, bytes]]) -> None:
    rows = _rows(events)
    data = b"".join(export_lines(GENESIS, rows, len(rows), rows[-1].hash))

    checked = _chain(data)
    read = _deep(data)

    assert checked.head == read[-1].hash == rows[-1].hash
    assert [e.state for e in read] == [s for _, s in events]


def _carrying(keys: int, events: int = 3) -> bytes:
    """An export whose every event line carries `keys` keys (made up: the integrity check
    does not open them)."""
    carried = {bytes([i]) * 16: bytes([i]) * 32 for i in range(1, keys + 1)}
    rows = _rows([("mind.thread.opened", state_bytes({"n": i}, "t", 1)) for i in range(events)])
    lines, prev = [header_line(GENESIS, len(rows), rows[-1].hash)], GENESIS.genesis
    for row in rows:
        assert isinstance(row.state, bytes)
        lines.append(
            event_line(
                row.position,
                AGGREGATE,
                str(row.topic),
                row.position,
                row.state,
                carried,
                prev,
                row.hash,
            )
        )
        prev = row.hash
    return b"".join(lines)


@pytest.mark.parametrize("keys", [0, 1, 2, 5])
def test_lines_with_no_key_one_or_several_pass(keys: int) -> None:
    data = _carrying(keys)

    checked = _chain(data)

    assert (checked.events, checked.head) == (3, json.loads(data.splitlines()[0])["head"])
    assert data.splitlines()[2].count(b'=",') == max(keys - 1, 0)


@pytest.mark.parametrize("keys", [0, 1, 2])
@pytest.mark.parametrize(
    "forge",
    [
        (b'"}', b'A"}'),  # the last key a character longer
        (b'="}', b'"}'),  # the last key a character shorter
        (b'":"', b'":""'),  # a quote more
        (b'{"', b'{ "'),  # a space before the first key
        (b"{}", b'{"":""}'),  # a key with an empty id
        (b'},"state"', b'},"State"'),  # the state's name
    ],
)
def test_a_forged_keys_field_is_refused_at_its_line(keys: int, forge: tuple[bytes, bytes]) -> None:
    lines = _carrying(keys).splitlines(keepends=True)
    old, new = forge
    if old not in lines[2]:
        return  # not in a line with this many keys
    lines[2] = lines[2].replace(old, new, 1)

    assert _refused_at(b"".join(lines)) == 3


def test_a_keys_field_as_long_as_one_key_but_not_one_is_refused() -> None:
    lines = _carrying(0).splitlines(keepends=True)
    two = b'"%s":"%s",' % (b"a" * 10, b"b" * 12)  # two short keys, 81 bytes with the second
    second = b'"%s":"%s"' % (b"c" * 32, b"d" * (81 - len(two) - 37))
    assert len(two + second) == 81
    lines[2] = lines[2].replace(b'"keys":{}', b'"keys":{%s}' % (two + second), 1)

    assert _refused_at(b"".join(lines)) == 3


def test_an_export_of_no_events_passes_with_blank_lines_after_its_header() -> None:
    header = header_line(GENESIS, 0, None)

    assert _chain(header).events == 0
    assert _chain(header + b"\n\n").events == 0
    assert _refused_at(header + b"\n" + _carrying(1).splitlines(keepends=True)[1]) == 2


@pytest.mark.parametrize("at", [1, 6, 7, 8, 9, 10, 11, 14, 15, 99, 100, 101, 119, 120])
def test_the_runs_of_lines_between_counts_check_each_line(
    at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export_chain, "PROGRESS_EVERY", 7)  # a run ends every 7 lines or so
    data = _carrying(1, events=120)
    heard: list[int] = []

    checked = ExportReader(io.BytesIO(data)).chain(None, heard.append)

    assert checked.events == 120 and heard == sorted(heard) and heard[-1] == 120
    assert {8, 9, 10, 99, 100} & set(heard)  # the position widens at 10 and 100
    lines = data.splitlines(keepends=True)
    changed = lines[at].replace(b'"position":%d,' % at, b'"position":%d,' % (at + 1))
    dropped = lines[:at] + lines[at + 1 :]
    assert _refused_at(b"".join([*lines[:at], changed, *lines[at + 1 :]])) == at + 1
    assert _refused_at(b"".join(dropped)) == at + 1  # (the last: where the file ends short)
