"""`mind verify`: the chain, the heads kept outside it, and its JSON shape on a damaged file."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result

Cli = Callable[..., Result]


def drop_last_event(ledger: Path) -> None:
    """What an attacker (or a bad restore) does: the last event and its chain row are gone."""
    con = sqlite3.connect(ledger)
    con.execute(
        "DELETE FROM ledger_chain WHERE position = (SELECT max(position) FROM ledger_chain)"
    )
    con.execute("DELETE FROM stored_events WHERE rowid = (SELECT max(rowid) FROM stored_events)")
    con.commit()
    con.close()


def test_every_write_records_the_new_head_in_the_anchor_file(cli: Cli, mind_home: Path) -> None:
    cli("commit", "Water the plants")

    anchor = json.loads((mind_home / "ledger-head.json").read_text())
    status = cli("status", "--json").json()

    assert anchor == {
        "ledger_id": status["ledger_id"],
        "position": 2,
        "hash": status["head"]["hash"],
    }


def test_a_ledger_whose_last_event_was_deleted_is_behind_its_anchor(
    cli: Cli, mind_home: Path
) -> None:
    cli("commit", "Water the plants")
    cli("commit", "Send the weekly report")
    drop_last_event(mind_home / "ledger.sqlite")

    result = cli("verify", "--json")

    assert result.exit_code == 1
    data = result.json()
    assert (data["ok"], data["events"], data["first_bad"], data["reason"]) == (
        False,
        2,
        3,
        "ledger behind its anchor",
    )
    assert data["anchors"][0]["status"] == "ledger ends at position 2, before the anchored 3"


def test_the_read_model_is_an_anchor_when_the_anchor_file_is_gone(
    cli: Cli, mind_home: Path
) -> None:
    cli("commit", "Water the plants")
    assert cli("commitments").exit_code == 0  # the projector catches up to position 2
    (mind_home / "ledger-head.json").unlink()
    drop_last_event(mind_home / "ledger.sqlite")

    result = cli("verify")

    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "BROKEN at position 2: ledger behind its anchor (1 events verified before it)"
    )
    assert "  anchor read model (position 2): ledger ends at position 1" in result.output


def test_a_head_the_user_kept_fails_verify_once_it_is_gone(cli: Cli, mind_home: Path) -> None:
    cli("commit", "Water the plants")
    kept = cli("status", "--json").json()["head"]["hash"]
    before = cli("verify", "--head", kept)
    (mind_home / "ledger-head.json").unlink()
    drop_last_event(mind_home / "ledger.sqlite")

    after = cli("verify", "--head", kept, "--json")

    assert before.exit_code == 0
    assert "  anchor --head: ok" in before.output
    assert after.exit_code == 1
    assert (after.json()["ok"], after.json()["reason"]) == (False, "ledger differs from its anchor")


def test_a_head_option_that_is_no_hash_is_a_usage_error(cli: Cli, mind_home: Path) -> None:
    result = cli("verify", "--head", "not-a-hash")

    assert result.exit_code == 2
    assert "give a head hash: 64 hexadecimal digits" in result.stderr


def test_an_anchor_of_another_ledger_fails_verify(cli: Cli, mind_home: Path) -> None:
    anchor = mind_home / "ledger-head.json"
    kept = json.loads(anchor.read_text())
    anchor.write_text(json.dumps({**kept, "ledger_id": "0" * 32}))

    result = cli("verify", "--json")

    assert (result.exit_code, result.json()["reason"]) == (1, "ledger differs from its anchor")


def test_an_unreadable_anchor_is_reported_as_a_failure(cli: Cli, mind_home: Path) -> None:
    anchor = mind_home / "ledger-head.json"
    anchor.unlink()
    anchor.mkdir()  # cannot be read as a file (chmod would not stop root)

    result = cli("verify")

    assert result.exit_code == 1
    assert result.output.startswith("BROKEN: anchor file unreadable")
    assert f"  anchor {anchor}: unreadable: {anchor} cannot be read" in result.output


def test_verify_json_on_a_damaged_ledger_still_prints_the_json_shape(
    cli: Cli, mind_home: Path
) -> None:
    for journal in mind_home.glob("ledger.sqlite-*"):
        journal.unlink()
    (mind_home / "ledger.sqlite").write_bytes(b"this is not a database" * 100)

    result = cli("verify", "--json")

    assert result.exit_code == 1
    data = result.json()
    assert set(data) == {"ok", "events", "first_bad", "reason", "head", "anchors"}
    assert data["ok"] is False
    assert "is not a readable mindledger ledger" in data["reason"]


def test_a_hand_edited_genesis_record_is_a_broken_chain_not_a_crash(
    cli: Cli, mind_home: Path
) -> None:
    con = sqlite3.connect(mind_home / "ledger.sqlite")
    con.execute("UPDATE ledger_meta SET genesis_hash = 'not hex'")
    con.commit()
    con.close()

    result = cli("verify", "--json")

    assert result.exit_code == 1
    assert (result.json()["first_bad"], result.json()["reason"]) == (1, "chain hash altered")
