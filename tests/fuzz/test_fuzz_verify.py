"""`mind verify --json` on a ledger damaged in arbitrary ways: always the JSON shape, exit 0 or 1,
never a traceback; a damaged ledger never passes."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Result
from tests.fuzz.harness import assert_well_behaved, invoke, json_values

Cli = Callable[..., Result]
COLUMNS = [
    ("stored_events", "state"),
    ("stored_events", "topic"),
    ("stored_events", "originator_version"),
    ("ledger_chain", "content_hash"),
    ("ledger_chain", "hash"),
    ("ledger_chain", "position"),
    ("ledger_meta", "genesis_hash"),
]
edits = st.one_of(
    st.tuples(
        st.just("set"),
        st.sampled_from(COLUMNS),
        st.integers(1, 6),
        st.one_of(
            st.binary(max_size=20),
            st.text(max_size=20),
            st.integers(-(2**63), 2**63 - 1),
            json_values.map(json.dumps),
        ),
    ),
    st.tuples(
        st.just("delete"),
        st.sampled_from(["stored_events", "ledger_chain"]),
        st.integers(1, 6),
        st.none(),
    ),
    st.tuples(st.just("flip"), st.none(), st.integers(0, 40_000), st.integers(1, 255)),
    st.tuples(st.just("cut"), st.none(), st.integers(0, 40_000), st.none()),
)


@pytest.fixture
def pristine(cli: Cli, mind_home: Path, tmp_path: Path) -> Path:
    for text in ("Water the plants", "Send the weekly report", "Call the bank"):
        cli("commit", text)
    con = sqlite3.connect(mind_home / "ledger.sqlite")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    kept = tmp_path / "pristine.sqlite"
    shutil.copy(mind_home / "ledger.sqlite", kept)
    return kept


def damage(ledger: Path, edit: tuple[str, object, int, object]) -> None:
    kind, where, at, value = edit
    if kind in ("flip", "cut"):
        data = bytearray(ledger.read_bytes())
        at %= len(data)
        if kind == "flip":
            data[at] ^= int(value)  # type: ignore[call-overload]
        else:
            del data[at:]
        ledger.write_bytes(bytes(data))
        return
    con = sqlite3.connect(ledger)
    try:
        if kind == "delete":
            key = "rowid" if where == "stored_events" else "position"
            con.execute(f"DELETE FROM {where} WHERE {key} = ?", (at,))
        else:
            table, column = where  # type: ignore[misc]
            key = "rowid" if table != "ledger_chain" else "position"
            con.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", (value, at))
        con.commit()
    except sqlite3.Error:
        pass  # a constraint refused the edit: the ledger is as it was
    finally:
        con.close()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edit=edits)
def test_verify_json_on_any_damage_prints_its_shape_and_never_passes_a_changed_ledger(
    edit: tuple[str, object, int, object], pristine: Path, mind_home: Path
) -> None:
    ledger = mind_home / "ledger.sqlite"
    for journal in mind_home.glob("ledger.sqlite-*"):
        journal.unlink()
    shutil.copy(pristine, ledger)
    damage(ledger, edit)

    run = invoke(["verify", "--json"])

    assert_well_behaved(run)
    data = json.loads(run.stdout)
    assert set(data) == {"ok", "events", "first_bad", "reason", "head", "anchors"}
    assert run.exit_code == (0 if data["ok"] else 1)
    if data["ok"]:  # only damage that left every event's bytes as they were may pass
        assert _events(ledger) == _events(pristine), run.describe()


def _events(ledger: Path) -> list[tuple[object, ...]]:
    con = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    try:
        return con.execute(
            "SELECT c.position, c.hash, e.topic, e.originator_id, e.originator_version, e.state "
            "FROM ledger_chain c JOIN stored_events e ON e.rowid = c.notification_id "
            "ORDER BY c.position"
        ).fetchall()
    finally:
        con.close()
