"""Exports of a sealed ledger: envelopes as stored plus the keys that still open them, so the
imported mind reads as the exported one (forgotten events stay forgotten), and no plaintext of
a sealed field reaches the imported ledger or key store."""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mindledger.adapters.hash_chain import content_hash, link_hash
from mindledger.adapters.ledger_export import state_bytes
from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.adapters.sealing import open_state
from mindledger.cli.main import mind
from tests.conftest import Result
from tests.forged_exports import encoded, export_lines

Cli = Callable[..., Result]
# The sealed texts `_fill` records (commitment, turn, reply, commitment, thread, a reason).
SEALED_TEXTS = (
    "Send the report on Friday",
    "When is the report due?",
    "Noted, I will draft it",
    "draft the report Thursday",
    "why is it late?",
    "A careful archivist",
)


def _fill(cli: Cli) -> None:
    assert cli("commit", SEALED_TEXTS[0]).exit_code == 0
    reply = (
        f"{SEALED_TEXTS[2]}.\nCOMMIT: {SEALED_TEXTS[3]}\n"
        f'THREAD: {{"label": "late report", "content": "{SEALED_TEXTS[4]}"}}'
    )
    turn = cli("turn", SEALED_TEXTS[1], "--model", "mock", "--mock-reply", reply)
    assert turn.exit_code == 0, turn.output
    assert cli("identity", "adopt", "Ada", "--reason", SEALED_TEXTS[5]).exit_code == 0


def _run(home: Path, *args: str) -> Result:
    r = CliRunner().invoke(mind, ["--home", str(home), *args], catch_exceptions=False)
    return Result(r.exit_code, r.stdout, r.stderr)


def _export(home: Path, folder: Path, fmt: str = "jsonl") -> Path:
    done = _run(home, "export", str(folder), "--format", fmt, "--json")
    assert done.exit_code == 0, done.output
    return Path(done.json()["file"])


def _log(home: Path) -> list[dict[str, Any]]:
    logged = _run(home, "log", "--limit", "1000", "--json")
    assert logged.exit_code == 0, logged.output
    events: list[dict[str, Any]] = logged.json()
    return events


def _lines(path: Path) -> list[dict[str, Any]]:
    return export_lines(path)


def _forget_key(home: Path, key_id: str) -> None:
    """Forgetting as the key store sees it: the data key's row deleted."""
    con = sqlite3.connect(home / "keys.sqlite")
    with con:
        assert con.execute("DELETE FROM keys WHERE id = ?", (bytes.fromhex(key_id),)).rowcount == 1
    con.close()


def test_an_imported_export_reads_the_same_texts_as_its_source(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    path = _export(mind_home, tmp_path / "out")
    new = tmp_path / "restored"

    imported = _run(new, "import", "ledger", str(path))

    assert imported.exit_code == 0, imported.stderr
    assert _log(new) == _log(mind_home)
    texts = json.dumps(_log(new))
    assert all(text in texts for text in SEALED_TEXTS)
    listed = _run(new, "commitments", "--json").json()
    assert sorted(c["text"] for c in listed) == sorted([SEALED_TEXTS[0], SEALED_TEXTS[3]])
    assert _run(new, "verify").exit_code == 0


def test_the_imported_ledger_and_key_store_hold_no_sealed_plaintext(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    path = _export(mind_home, tmp_path / "out")
    new = tmp_path / "restored"

    assert _run(new, "import", "ledger", str(path)).exit_code == 0

    stored = sorted([*new.glob("ledger.sqlite*"), *new.glob("keys.sqlite*")])
    assert {p.name for p in stored} >= {"ledger.sqlite", "keys.sqlite"}
    for file in stored:
        data = file.read_bytes()
        for text in SEALED_TEXTS:
            assert text.encode() not in data, (file.name, text)
    assert SEALED_TEXTS[0] in json.dumps(_log(new))  # yet the mind reads it


def test_a_forgotten_event_is_exported_without_keys_and_imports_forgotten(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    before = _lines(_export(mind_home, tmp_path / "before"))
    opened = next(e for e in before if e.get("topic") == "mind.commitment.opened")
    (key_id,) = opened["keys"]
    _forget_key(mind_home, key_id)

    path = _export(mind_home, tmp_path / "after")
    new = tmp_path / "restored"
    checked = _run(tmp_path / "nowhere", "verify", "--export", str(path))
    imported = _run(new, "import", "ledger", str(path))

    after = _lines(path)
    line = next(e for e in after if e.get("position") == opened["position"])
    assert "keys" not in line
    assert line["payload"] == opened["payload"]  # the stored envelope, hashed as before
    assert [e for e in after if e is not line] == [e for e in before if e is not opened]
    assert checked.exit_code == 0, checked.stderr
    assert imported.exit_code == 0, imported.stderr
    commitments = [e for e in _log(new) if e["type"] == "mind.commitment.opened"]
    assert [e["payload"]["text"] for e in commitments] == ["[forgotten]", SEALED_TEXTS[3]]
    assert _log(new) == _log(mind_home)
    assert _run(new, "verify").exit_code == 0


def test_the_transcript_shows_opened_text_and_forgotten_fields_never_envelopes(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    opened = next(
        e
        for e in _lines(_export(mind_home, tmp_path / "jsonl"))
        if e.get("topic") == "mind.commitment.opened"
    )
    _forget_key(mind_home, next(iter(opened["keys"])))

    text = _export(mind_home, tmp_path / "md", "md").read_text()

    assert "$sealed" not in text
    assert f"> {SEALED_TEXTS[1]}" in text and SEALED_TEXTS[2] in text
    assert f"commitment **opened** `{opened['payload']['cid']}`: \\[forgotten\\]" in text
    assert SEALED_TEXTS[0] not in text
    assert SEALED_TEXTS[3] in text and "identity **name adopted**: Ada" in text


def test_a_changed_carried_key_is_refused_by_verify_and_import_with_its_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    path = _export(mind_home, tmp_path / "out")
    lines = _lines(path)
    number = next(i for i, e in enumerate(lines, 1) if e.get("topic") == "mind.commitment.opened")
    event = lines[number - 1]
    (key_id, key) = next(iter(event["keys"].items()))
    other = base64.b64encode(bytes(b ^ 1 for b in base64.b64decode(key))).decode()
    lines[number - 1] = {**event, "keys": {key_id: other}}
    path.write_bytes(encoded(lines))
    new = tmp_path / "restored"

    intact = _run(tmp_path / "nowhere", "verify", "--export", str(path))  # keys: not chained
    checked = _run(tmp_path / "nowhere", "verify", "--export", str(path), "--deep")
    imported = _run(new, "import", "ledger", str(path))

    assert intact.exit_code == 0, intact.stderr
    assert checked.exit_code == 1
    reason = f"line {number}: key {key_id} does not open the sealed field 'text' (changed?)"
    assert checked.stderr.strip() == f"BROKEN at {reason}"
    assert imported.exit_code == 1
    assert reason in imported.stderr
    assert not new.exists()


def _as_version_1(path: Path) -> Path:
    """The export as a mind written before sealing would have made it: plaintext payloads, no
    keys, hashes recomputed over those bytes, version 1."""
    header, *events = _lines(path)
    prev = header["genesis"]
    out = []
    for event in events:
        keys = {bytes.fromhex(i): base64.b64decode(k) for i, k in event.pop("keys", {}).items()}
        topic, aggregate, version = event["topic"], event["aggregate"], event["version"]
        payload = open_state(topic, aggregate, version, event["payload"], keys)
        state = state_bytes(payload, event["time"], event["schema"])
        event.update(payload=payload, prev=prev)
        event["hash"] = prev = link_hash(prev, content_hash(topic, aggregate, version, state))
        out.append(event)
    header.update(version=1, head=prev)
    old = path.with_name("v1.jsonl")
    old.write_bytes(b"".join(canonical_json(o) + b"\n" for o in [header, *out]))
    return old


def test_a_version_1_export_still_verifies_and_imports_as_plaintext(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    old = _as_version_1(_export(mind_home, tmp_path / "out"))
    new = tmp_path / "restored"

    checked = _run(tmp_path / "nowhere", "verify", "--export", str(old))
    imported = _run(new, "import", "ledger", str(old))

    assert SEALED_TEXTS[0] in old.read_text() and '"keys"' not in old.read_text()
    assert checked.exit_code == 0, checked.stderr
    assert imported.exit_code == 0, imported.stderr
    listed = _run(new, "commitments", "--json").json()
    assert sorted(c["text"] for c in listed) == sorted([SEALED_TEXTS[0], SEALED_TEXTS[3]])
    assert _run(new, "verify").exit_code == 0


def test_keys_in_a_version_1_export_are_a_stray_field(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    path = _export(mind_home, tmp_path / "out")
    header, *events = _lines(path)  # written as version 2 wrote them, marked version 1
    marked = [{**header, "version": 1}, *events]
    path.write_bytes(b"".join(canonical_json(o) + b"\n" for o in marked))
    number = next(i for i, e in enumerate(events, 2) if "keys" in e)

    checked = _run(tmp_path / "nowhere", "verify", "--export", str(path))

    assert checked.exit_code == 1
    assert checked.stderr.strip() == f"BROKEN at line {number}: unexpected fields ['keys']"


def test_forgetting_what_was_written_before_sealing_says_it_cannot_and_records_nothing(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    old = _as_version_1(_export(mind_home, tmp_path / "out"))
    new = tmp_path / "restored"
    assert _run(new, "import", "ledger", str(old)).exit_code == 0
    cid = next(c["cid"] for c in _run(new, "commitments", "--json").json())
    before = len(_log(new))

    dry = _run(new, "forget", "--commitment", cid, "--dry-run")
    done = _run(new, "forget", "--commitment", cid, "--yes")

    for refused in (dry, done):
        assert refused.exit_code == 1
        lines = [line for line in refused.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "written before sealing" in lines[0], refused.stderr
    assert len(_log(new)) == before
    assert _run(new, "verify").exit_code == 0
