"""A key store that does not match the ledger (a data key replaced): `mind verify` passes (it
checks the chain, not the keys), so the line a read prints names the key and the key store,
not `mind verify`; `mind doctor` finds the event whose sealed field will not open."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result

Cli = Callable[..., Result]


def replace_every_key(home: Path) -> None:
    con = sqlite3.connect(home / "keys.sqlite")
    try:
        for (key_id,) in con.execute("SELECT id FROM keys").fetchall():
            con.execute("UPDATE keys SET key = ? WHERE id = ?", (os.urandom(32), key_id))
        con.commit()
    finally:
        con.close()


def test_a_key_store_that_does_not_match_says_so_and_doctor_finds_it(
    cli: Cli, mind_home: Path
) -> None:
    assert cli("commit", "Water the ficus").exit_code == 0
    replace_every_key(mind_home)
    for stale in mind_home.glob("readmodel*.duckdb*"):  # what was opened before is gone
        stale.unlink()

    read = cli("commitments")
    verify = cli("verify")
    doctor = cli("doctor", "--json")

    assert read.exit_code == 1
    lines = read.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), read.stderr
    assert "key store does not match the ledger" in lines[0] and "mind doctor" in lines[0]
    assert "mind verify" not in lines[0]
    assert verify.exit_code == 0
    keys = next(c for c in doctor.json()["checks"] if c["name"] == "keys")
    assert keys["status"] == "fail" and keys["detail"].startswith("position ")
    assert "does not open with key" in keys["detail"]
