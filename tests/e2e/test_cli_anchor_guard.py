"""Writers and replay refuse a ledger that is behind (or differs from) its anchor file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result
from tests.e2e.test_cli_verify import drop_last_event

Cli = Callable[..., Result]


def one_error_line(result: Result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.stderr
    return lines[0]


def test_a_commit_to_a_truncated_ledger_is_refused_and_the_anchor_kept(
    cli: Cli, mind_home: Path
) -> None:
    cli("commit", "one")
    cli("commit", "two")
    drop_last_event(mind_home / "ledger.sqlite")
    ledger = (mind_home / "ledger.sqlite").read_bytes()
    anchor = (mind_home / "ledger-head.json").read_bytes()

    result = cli("commit", "three")

    assert result.exit_code == 1
    line = one_error_line(result)
    assert "ends at position 2, before the 3" in line
    assert "mind verify" in line
    assert (mind_home / "ledger.sqlite").read_bytes() == ledger
    assert (mind_home / "ledger-head.json").read_bytes() == anchor
    assert cli("verify").exit_code == 1


def test_a_commit_over_a_rewritten_anchored_position_is_refused(cli: Cli, mind_home: Path) -> None:
    cli("commit", "one")
    path = mind_home / "ledger-head.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "hash": "f" * 64}))

    result = cli("commit", "two")

    assert result.exit_code == 1
    assert "hash at position 2 is not the one its anchor" in one_error_line(result)


def test_a_commit_with_an_unreadable_anchor_is_refused(cli: Cli, mind_home: Path) -> None:
    (mind_home / "ledger-head.json").write_text("{bad")

    result = cli("commit", "one")

    assert result.exit_code == 1
    assert "mind verify" in one_error_line(result)
    assert (mind_home / "ledger-head.json").read_text() == "{bad"


def test_a_commit_without_an_anchor_file_starts_one(cli: Cli, mind_home: Path) -> None:
    (mind_home / "ledger-head.json").unlink()

    result = cli("commit", "one")

    assert result.exit_code == 0
    assert json.loads((mind_home / "ledger-head.json").read_text())["position"] == 2


def test_an_unreadable_anchor_fails_verify(cli: Cli, mind_home: Path) -> None:
    (mind_home / "ledger-head.json").write_text("{bad")

    result = cli("verify", "--json")

    assert result.exit_code == 1
    data = result.json()
    assert data["ok"] is False
    (head,) = [a for a in data["anchors"] if a["source"].endswith("ledger-head.json")]
    assert head["status"].startswith("unreadable")


def test_a_missing_anchor_is_a_note_not_a_failure(cli: Cli, mind_home: Path) -> None:
    (mind_home / "ledger-head.json").unlink()

    result = cli("verify", "--json")

    assert result.exit_code == 0
    anchors = result.json()["anchors"]
    (head,) = [a for a in anchors if a["source"].endswith("ledger-head.json")]
    assert head["status"].startswith("missing")


def test_replay_swap_refuses_a_ledger_that_fails_verify(cli: Cli, mind_home: Path) -> None:
    cli("commit", "one")
    cli("commit", "two")
    assert cli("commitments").exit_code == 0
    (mind_home / "ledger-head.json").unlink()
    drop_last_event(mind_home / "ledger.sqlite")
    before = {p.name: p.read_bytes() for p in mind_home.glob("readmodel*")}

    result = cli("replay", "--swap")

    assert result.exit_code == 1
    assert "mind verify" in one_error_line(result)
    assert {p.name: p.read_bytes() for p in mind_home.glob("readmodel*")} == before
    assert cli("verify").exit_code == 1


def test_replay_swap_on_a_sound_ledger_still_swaps(cli: Cli, mind_home: Path) -> None:
    cli("commit", "one")

    result = cli("replay", "--swap", "--json")

    assert result.exit_code == 0
    assert result.json()["swapped"] is True


def test_a_write_to_a_ledger_behind_its_read_model_is_refused_without_the_anchor_file(
    cli: Cli, mind_home: Path
) -> None:
    """Deleting the anchor file with the last events left the read model as the one witness:
    a commit was taken, at a position the read model had projected already, so no read ever
    showed it (verify said BROKEN)."""
    cli("commit", "one")
    cli("commit", "two")
    assert cli("project").exit_code == 0  # the read model at position 3
    drop_last_event(mind_home / "ledger.sqlite")
    (mind_home / "ledger-head.json").unlink()
    ledger = (mind_home / "ledger.sqlite").read_bytes()

    commit = cli("commit", "three")
    turn = cli("turn", "--model", "mock", "--mock-reply", "ok", "hello")

    for result in (commit, turn):
        assert result.exit_code == 1
        assert one_error_line(result) == (
            "Error: nothing was written: the ledger ends at position 2, before the 3 its read "
            "model has projected (events were deleted, or the read model is another ledger's); "
            "run `mind verify`"
        )
    assert (mind_home / "ledger.sqlite").read_bytes() == ledger
    assert cli("verify").exit_code == 1


def test_a_mind_made_again_in_its_folder_drops_the_old_minds_read_model(
    cli: Cli, mind_home: Path
) -> None:
    """Its ledger's files deleted and `mind init` run again: the old read model was kept, the
    new mind listed the old one's commitments and its own writes were refused (or, before,
    taken at positions the old read model had projected, and never shown)."""
    assert cli("commit", "Feed the old cat").exit_code == 0
    assert cli("project").exit_code == 0
    for path in mind_home.iterdir():
        if path.name.startswith(("ledger", "keys")):
            path.unlink()

    made = cli("init", "--name", "Again")
    first = cli("commit", "Water the new fern")
    listed = cli("commitments", "--json")

    assert made.exit_code == 0 and first.exit_code == 0, first.output
    assert [c["text"] for c in listed.json()] == ["Water the new fern"]
    assert cli("verify").exit_code == 0


def test_init_over_a_mind_keeps_its_read_model(cli: Cli, mind_home: Path) -> None:
    assert cli("project").exit_code == 0
    kept = (mind_home / "readmodel.duckdb").stat().st_mtime_ns

    assert cli("init", "--name", "Again").exit_code == 1
    assert (mind_home / "readmodel.duckdb").stat().st_mtime_ns == kept
