"""The forgeries a clean-clone attacker trial got past `mind verify --export` and `mind import
ledger` (issue #28), each through the real `mind` command: a second stream for an existing
commitment id carrying plain text, a second identity; both now refused at their line with
nothing written. A consistent forgery (sealed, on its derived stream) still makes a working
mind, and an editor's trailing blank line no longer breaks a good export."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.sealing import ENVELOPE
from mindledger.domain.commitment import episode_id
from mindledger.domain.identity import IDENTITY_ID
from tests.conftest import Result
from tests.e2e.test_cli_export_ledger import opened_payload
from tests.forged_exports import export_lines, forge, sealed
from tests.fuzz.harness import assert_well_behaved, invoke, ledger_state

Cli = Callable[..., Result]


@pytest.fixture
def exported(cli: Cli, mind_home: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """A mind with one closed commitment and a turn, exported."""
    assert cli("commit", "Send the report").exit_code == 0
    cid = cli("commitments", "--json").json()[0]["cid"]
    assert cli("close", cid, "--reason", "sent").exit_code == 0
    assert cli("turn", "hi", "--model", "mock", "--mock-reply", "ok").exit_code == 0
    assert cli("export", str(tmp_path / "out"), "--format", "jsonl").exit_code == 0
    return export_lines(tmp_path / "out" / "ledger.jsonl")


def _first(lines: list[dict[str, Any]], topic: str) -> dict[str, Any]:
    return next(line for line in lines[1:] if line["topic"] == topic)


def _refused(forged: bytes, tmp_path: Path, line: int, reason: str, source: Path) -> None:
    """Verify and import both refuse the file at `line` saying `reason`; nothing is written,
    and the exported mind still verifies."""
    path, new = tmp_path / "forged.jsonl", tmp_path / "new"
    path.write_bytes(forged)
    before = ledger_state(source)

    intact = invoke(["verify", "--export", str(path)])  # the chain holds: computed anew
    checked = invoke(["verify", "--export", str(path), "--deep"])
    imported = invoke(["--home", str(new), "import", "ledger", str(path)])

    assert intact.exit_code == 0, intact.describe()
    assert checked.exit_code == imported.exit_code == 1, (checked.describe(), imported.describe())
    assert_well_behaved(imported)
    assert [ln for ln in checked.stderr.splitlines() if ln.strip()] == [
        ln for ln in checked.stderr.splitlines() if ln.startswith(f"BROKEN at line {line}: ")
    ], checked.describe()
    assert reason in checked.stderr, checked.describe()
    assert imported.stderr.startswith(f"Error: line {line}: "), imported.describe()
    assert reason in imported.stderr, imported.describe()
    assert not new.exists()
    assert ledger_state(source) == before
    assert invoke(["--home", str(source), "verify"]).exit_code == 0


def test_a_second_stream_for_an_existing_commitment_id_is_refused(
    exported: list[dict[str, Any]], mind_home: Path, tmp_path: Path
) -> None:
    opened = _first(exported, "mind.commitment.opened")
    forged = {  # the trial's attack: another aggregate, the CID of a closed promise, plain text
        "topic": opened["topic"],
        "aggregate": uuid.uuid4().hex,
        "version": 1,
        "time": exported[-1]["time"],
        "payload": {**opened_payload(opened), "text": "Wire the money to the forger"},
    }

    _refused(
        forge(exported, forged),
        tmp_path,
        len(exported) + 1,
        "a second stream for one commitment",
        mind_home,
    )


def test_plain_text_where_the_mind_seals_its_words_is_refused(
    exported: list[dict[str, Any]], mind_home: Path, tmp_path: Path
) -> None:
    opened = _first(exported, "mind.commitment.opened")
    payload = {**opened_payload(opened), "episode": 2, "text": "Wire the money"}
    forged = {  # the derived stream of the next episode, but its words in the clear
        "topic": opened["topic"],
        "aggregate": episode_id(payload["cid"], 2).hex,
        "version": 1,
        "time": exported[-1]["time"],
        "payload": payload,
    }

    _refused(
        forge(exported, forged),
        tmp_path,
        len(exported) + 1,
        "field 'text' is in the clear where this ledger seals it",
        mind_home,
    )


@pytest.mark.parametrize(
    ("aggregate", "version", "reason"),
    [
        ("5eed" * 8, 1, "a second stream for one identity"),
        (IDENTITY_ID.hex, None, "mind.identity.created again"),
    ],
)
def test_a_second_identity_is_refused(
    exported: list[dict[str, Any]],
    mind_home: Path,
    tmp_path: Path,
    aggregate: str,
    version: int | None,
    reason: str,
) -> None:
    created = _first(exported, "mind.identity.created")
    last = max(e["version"] for e in exported[1:] if e["aggregate"] == IDENTITY_ID.hex)
    forged = {
        **created,
        "aggregate": aggregate,
        "version": version or last + 1,
        "payload": {**created["payload"], "name": "Mallory"},
    }

    _refused(forge(exported, forged), tmp_path, len(exported) + 1, reason, mind_home)


def test_a_consistent_forgery_makes_a_working_mind(
    exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    opened = _first(exported, "mind.commitment.opened")
    payload = {**opened_payload(opened), "episode": 2, "text": "Send the report again"}
    forged = sealed(  # the next episode on its derived stream, sealed with the forger's key
        {
            "topic": opened["topic"],
            "aggregate": episode_id(payload["cid"], 2).hex,
            "version": 1,
            "time": exported[-1]["time"],
            "payload": payload,
        }
    )
    path, new = tmp_path / "forged.jsonl", tmp_path / "new"
    path.write_bytes(forge(exported, forged))

    assert invoke(["verify", "--export", str(path), "--deep"]).exit_code == 0
    assert invoke(["--home", str(new), "import", "ledger", str(path)]).exit_code == 0
    listed = invoke(["--home", str(new), "commitments", "--json"])
    closed = invoke(["--home", str(new), "close", payload["cid"]])
    turn = invoke(["--home", str(new), "turn", "hello", "--model", "mock", "--mock-reply", "ok"])

    assert listed.exit_code == 0 and '"Send the report again"' in listed.stdout, listed.describe()
    assert closed.exit_code == 0, closed.describe()
    assert turn.exit_code == 0, turn.describe()
    assert invoke(["--home", str(new), "commitments", "--json"]).stdout.strip() == "[]"


def test_trailing_blank_lines_are_accepted_and_a_blank_line_inside_is_refused(
    cli: Cli, exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    good = tmp_path / "out" / "ledger.jsonl"
    trailing, inside = tmp_path / "trailing.jsonl", tmp_path / "inside.jsonl"
    trailing.write_bytes(good.read_bytes() + b"\n \n")
    lines = good.read_bytes().splitlines(keepends=True)
    inside.write_bytes(b"".join([*lines[:3], b"\n", *lines[3:]]))

    accepted = invoke(["verify", "--export", str(trailing)])
    imported = invoke(["--home", str(tmp_path / "a"), "import", "ledger", str(trailing)])
    refused = invoke(["verify", "--export", str(inside)])
    not_imported = invoke(["--home", str(tmp_path / "b"), "import", "ledger", str(inside)])

    assert accepted.exit_code == 0, accepted.describe()
    assert imported.exit_code == 0, imported.describe()
    assert refused.exit_code == not_imported.exit_code == 1
    assert "line 4: a blank line in the middle of the file" in refused.stderr, refused.describe()
    assert not_imported.stderr.startswith("Error: line 4: a blank line"), not_imported.describe()
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("carried", ["no key", "another key under its id"])
def test_an_envelope_under_another_lines_key_is_refused(
    exported: list[dict[str, Any]], mind_home: Path, tmp_path: Path, carried: str
) -> None:
    """The trial's attack: a new commitment whose sealed text is a copy of another event's
    envelope. The import keeps every line's keys in one store, so the copy would meet the
    other line's key there (or, with a key of its own under that id, overwrite it) and stop
    every read of the new mind; each line's keys must be its own."""
    opened = _first(exported, "mind.commitment.opened")
    (key_id,) = opened["keys"]
    cid = "c" + uuid.uuid4().hex[:10]
    forged: dict[str, Any] = {
        "topic": opened["topic"],
        "aggregate": episode_id(cid, 1).hex,
        "version": 1,
        "time": exported[-1]["time"],
        "payload": {**opened["payload"], "cid": cid},
    }
    if carried != "no key":  # its own words sealed under its own key, named as line 2's is
        forged = sealed({**forged, "payload": {**opened_payload(opened), "cid": cid}})
        (own,) = forged["keys"]
        forged["keys"] = {key_id: forged["keys"][own]}
        envelope = forged["payload"]["text"]
        forged["payload"]["text"] = {**envelope, ENVELOPE: key_id}
    reason = "sealed under the key of line" if carried == "no key" else "is named by line"

    _refused(forge(exported, forged), tmp_path, len(exported) + 1, reason, mind_home)
