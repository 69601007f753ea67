"""Tampering with the SQLite ledger is found at the first bad position, with the right reason."""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindledger.adapters.hash_chain import VerifyResult
from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
from mindledger.adapters.verification import verify_ledger
from tests.integration.ledger_factory import sqlite_mind


def verify(path: Path) -> VerifyResult:
    reader = SQLiteLedgerReader(path)
    try:
        return verify_ledger(reader, batch=7)
    finally:
        reader.close()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    folder = tmp_path_factory.mktemp("pristine")
    sqlite_mind(folder, commands=8)
    path = folder / "ledger.sqlite"
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    n = con.execute("SELECT count(*) FROM ledger_chain").fetchone()[0]
    con.close()
    return path, n


def copy(pristine: Path, tmp: Path) -> sqlite3.Connection:
    target = tmp / f"{uuid.uuid4().hex}.sqlite"
    shutil.copyfile(pristine, target)
    con = sqlite3.connect(target, isolation_level=None)
    con.execute("PRAGMA journal_mode=DELETE")
    return con


def row(con: sqlite3.Connection, rowid: int) -> tuple[str, int, str, bytes]:
    return con.execute(
        "SELECT originator_id, originator_version, topic, state FROM stored_events WHERE rowid = ?",
        (rowid,),
    ).fetchone()


def put(con: sqlite3.Connection, rowid: int, content: tuple[str, int, str, bytes]) -> None:
    con.execute(
        "UPDATE stored_events SET originator_id=?, originator_version=?, topic=?, "
        "state=? WHERE rowid=?",
        (*content, rowid),
    )


def shift(con: sqlite3.Connection, start: int, by: int, n: int) -> None:
    rowids = range(n, start - 1, -1) if by > 0 else range(start, n + 1)
    for r in rowids:
        con.execute("UPDATE stored_events SET rowid = rowid + ? WHERE rowid = ?", (by, r))


def test_an_untouched_ledger_verifies(pristine: tuple[Path, int]) -> None:
    path, n = pristine

    result = verify(path)

    assert (result.ok, result.events, result.first_bad, result.reason) == (True, n, None, None)


OPS = ["flip", "delete", "delete_shift", "swap", "insert_end", "insert_shift", "chain"]


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(op=st.sampled_from(OPS), data=st.data())
def test_tampering_is_reported_at_the_first_bad_position(
    pristine: tuple[Path, int], tmp_path: Path, op: str, data: st.DataObject
) -> None:
    path, n = pristine
    con = copy(path, tmp_path)
    p = data.draw(st.integers(1, n), label="position")
    if op == "flip":
        oid, version, topic, state = row(con, p)
        i = data.draw(st.integers(0, len(state) - 1), label="byte")
        bit = data.draw(st.integers(1, 255), label="xor")
        changed = state[:i] + bytes([state[i] ^ bit]) + state[i + 1 :]
        put(con, p, (oid, version, topic, changed))
        expected = (p, "payload changed")
    elif op == "delete":
        con.execute("DELETE FROM stored_events WHERE rowid = ?", (p,))
        expected = (p, "event deleted")
    elif op == "delete_shift":
        con.execute("DELETE FROM stored_events WHERE rowid = ?", (p,))
        shift(con, p + 1, -1, n)
        expected = (p, "event deleted")
    elif op == "swap":
        q = data.draw(st.integers(1, n).filter(lambda q: q != p), label="other")
        a, b = row(con, p), row(con, q)
        put(con, p, (uuid.uuid4().hex, 1, "x", b""))
        put(con, q, a)
        put(con, p, b)
        expected = (min(p, q), "events reordered")
    elif op == "insert_end":
        con.execute(
            "INSERT INTO stored_events (rowid, originator_id, originator_version, topic,"
            " state) VALUES (?, ?, 1, 'mind.thread.mentioned', '{}')",
            (n + 1, uuid.uuid4().hex),
        )
        expected = (n + 1, "event inserted")
    elif op == "insert_shift":
        shift(con, p, 1, n)
        con.execute(
            "INSERT INTO stored_events (rowid, originator_id, originator_version, topic,"
            " state) VALUES (?, ?, 1, 'mind.thread.mentioned', '{}')",
            (p, uuid.uuid4().hex),
        )
        expected = (p, "event inserted")
    else:
        con.execute("UPDATE ledger_chain SET hash = ? WHERE position = ?", ("0" * 64, p))
        expected = (p, "chain hash altered")
    target = Path(con.execute("PRAGMA database_list").fetchone()[2])
    con.close()

    result = verify(target)

    assert (result.ok, result.first_bad, result.reason) == (False, *expected)
    assert result.events == expected[0] - 1


def test_a_file_that_is_not_a_ledger_is_a_clear_error(tmp_path: Path) -> None:
    from mindledger.domain.errors import LedgerCorruptError

    junk = tmp_path / "ledger.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)

    with pytest.raises(LedgerCorruptError, match="not a readable mindledger ledger"):
        SQLiteLedgerReader(junk)
