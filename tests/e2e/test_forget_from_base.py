"""A forget's purge starts from the base the previous purge left when everything it reaches came
after it, and gives the read model a replay from 0 would; one that reaches back before the base
deletes it and replays from 0. Either way no file of the home keeps a forgotten word."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from mindledger.projections.engine import purge
from mindledger.projections.engine.schema import TABLES
from tests.conftest import Result
from tests.e2e.forget_memories import files_holding, forget, read_side, turn, verified

Cli = Callable[..., Result]
CANARY = "Zqxbased"
# What depends on when the term index was last sorted, not on the ledger: a follower's and a
# replay's differ too.
SORT_STATE = ("tracking", "term_counts")


def remember(cli: Cli, text: str) -> str:
    kept = cli("remember", text, "--json")
    assert kept.exit_code == 0, kept.stderr
    return str(kept.json()["id"])


def base_position(home: Path) -> int:
    con = duckdb.connect(str(home / "readmodel.base.duckdb"), read_only=True)
    try:
        row = con.execute("SELECT position FROM tracking").fetchone()
    finally:
        con.close()
    assert row is not None
    return int(row[0])


def differences(home: Path, replayed: Path) -> dict[str, int]:
    """Rows of each table that the read model and a replay from 0 do not share."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{home / 'readmodel.published.duckdb'}' AS purged (READ_ONLY)")
    con.execute(f"ATTACH '{replayed}' AS replayed (READ_ONLY)")
    found = {}
    for table in TABLES:
        if table in SORT_STATE:
            continue
        sql = (
            f"SELECT count(*) FROM ((SELECT * FROM purged.{table} EXCEPT ALL "
            f"SELECT * FROM replayed.{table}) UNION ALL (SELECT * FROM replayed.{table} "
            f"EXCEPT ALL SELECT * FROM purged.{table}))"
        )
        row = con.execute(sql).fetchone()
        if row and row[0]:
            found[table] = int(row[0])
    con.close()
    return found


def test_a_forget_after_the_base_starts_from_it_and_equals_a_replay(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    turn(cli, "The lantern is by the door", "Noted.")
    assert forget(cli, "--knowledge", remember(cli, "an early fact")).exit_code == 0
    base = base_position(mind_home)
    turn(cli, f"The vault word is {CANARY}", "Kept.")
    doomed = remember(cli, f"{CANARY} opens the vault")
    turn(cli, "What opens the vault?", "Something I kept.")  # its prompt may quote the item

    done = forget(cli, "--knowledge", doomed)

    assert done.exit_code == 0, done.stderr
    assert base_position(mind_home) == base  # a few events behind and free of it: kept
    replayed = tmp_path / "replayed.duckdb"
    assert cli("replay", "--into", str(replayed), "--json").exit_code == 0
    assert differences(mind_home, replayed) == {}
    assert files_holding(mind_home, f"{CANARY} opens") == []
    assert f"{CANARY} opens" not in read_side(cli, tmp_path / "shown")
    assert verified(cli)


def test_a_base_far_behind_the_head_is_renewed_by_the_next_forget(
    cli: Cli, mind_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(purge, "RENEW_AFTER", 2)  # a catch-up of 3 events is too long
    assert forget(cli, "--knowledge", remember(cli, "an early fact")).exit_code == 0
    base = base_position(mind_home)
    turn(cli, f"The vault word is {CANARY}", "Kept.")

    done = forget(cli, "--knowledge", remember(cli, f"{CANARY} opens the vault"))

    assert done.exit_code == 0, done.stderr
    assert base_position(mind_home) > base  # renewed at the new head
    replayed = tmp_path / "replayed.duckdb"
    assert cli("replay", "--into", str(replayed), "--json").exit_code == 0
    assert differences(mind_home, replayed) == {}
    assert files_holding(mind_home, f"{CANARY} opens") == []


def test_a_forget_reaching_before_the_base_leaves_it_nowhere(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    said = turn(cli, f"My locker code is {CANARY}", "Noted.")
    turn(cli, "Anything else?", "No.")
    assert forget(cli, "--knowledge", remember(cli, "a later fact")).exit_code == 0
    assert "readmodel.base.duckdb" in files_holding(mind_home, CANARY)  # the base holds it

    done = forget(cli, "--turn", str(said["turn"]))

    assert done.exit_code == 0, done.stderr
    assert files_holding(mind_home, CANARY) == []
    assert CANARY not in read_side(cli, tmp_path / "shown")
    replayed = tmp_path / "replayed.duckdb"
    assert cli("replay", "--into", str(replayed), "--json").exit_code == 0
    assert differences(mind_home, replayed) == {}
    assert verified(cli)


def test_a_renewed_base_ends_before_what_its_forget_reached_so_the_next_forget_starts_from_it(
    cli: Cli, mind_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Served clients remember, then forget: a forget waiting behind another holds an item
    # remembered before that one ended. A base renewed at the head was past it already.
    monkeypatch.setattr(purge, "RENEW_AFTER", 2)
    assert forget(cli, "--knowledge", remember(cli, "an early fact")).exit_code == 0
    turn(cli, "Anything new?", "No.")
    first = remember(cli, "a fact forgotten first")
    waiting = remember(cli, f"{CANARY} opens the vault")
    assert forget(cli, "--knowledge", first).exit_code == 0
    copies: list[tuple[str, str]] = []
    copy = purge._copy
    monkeypatch.setattr(purge, "_copy", lambda s, t: (copies.append((s.name, t.name)), copy(s, t)))

    done = forget(cli, "--knowledge", waiting)

    assert done.exit_code == 0, done.stderr
    assert ("readmodel.base.duckdb", "readmodel.aside.duckdb") in copies  # not a replay from 0
    replayed = tmp_path / "replayed.duckdb"
    assert cli("replay", "--into", str(replayed), "--json").exit_code == 0
    assert differences(mind_home, replayed) == {}
    assert files_holding(mind_home, f"{CANARY} opens") == []
    assert verified(cli)
