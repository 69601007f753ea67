"""`mind export --format jsonl|md`, `mind verify --export` and `mind import ledger` end to end."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mindledger.adapters.sealing import open_state
from mindledger.cli.main import mind
from mindledger.projections.engine.replay import differences
from tests.conftest import Result

Cli = Callable[..., Result]


def _fill(cli: Cli) -> None:
    assert cli("commit", "Send the report on Friday").exit_code == 0
    assert cli("concept", "define", "user.report", "The weekly report").exit_code == 0
    reply = (
        "Noted.\nCOMMIT: draft the report Thursday\n"
        'THREAD: {"label": "late report", "content": "why is it late?"}'
    )
    turn = cli("turn", "When is the report due?", "--model", "mock", "--mock-reply", reply)
    assert turn.exit_code == 0, turn.output
    assert cli("identity", "adopt", "Ada").exit_code == 0


def _export(cli: Cli, folder: Path, fmt: str = "jsonl") -> dict[str, object]:
    done = cli("export", str(folder), "--format", fmt, "--json")
    assert done.exit_code == 0, done.output
    result: dict[str, object] = done.json()
    return result


def same_read_models(source: Path, imported: Path) -> bool:
    """Both homes' read models brought up to their heads, then compared as `replay --check`
    compares (`replay.differences`)."""
    for home in (source, imported):
        assert _run(home, "project").exit_code == 0
    found = differences(
        source / "readmodel.published.duckdb", imported / "readmodel.published.duckdb"
    )
    assert found == [], found
    return True


def opened_payload(line: dict[str, Any]) -> dict[str, Any]:
    """An export line's payload (version 3: its state) with its envelopes opened by the keys
    the line carries."""
    keys = {bytes.fromhex(i): base64.b64decode(k) for i, k in line.get("keys", {}).items()}
    state = json.loads(json.dumps(line["payload"] if "payload" in line else line["state"]))
    return open_state(line["topic"], line["aggregate"], line["version"], state, keys)


def _run(home: Path, *args: str) -> Result:
    r = CliRunner().invoke(mind, ["--home", str(home), *args], catch_exceptions=False)
    return Result(r.exit_code, r.stdout, r.stderr)


def test_export_import_gives_the_same_genesis_head_and_read_models(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    done = _export(cli, tmp_path / "out")
    status = cli("status", "--json").json()
    new = tmp_path / "restored"

    imported = _run(new, "import", "ledger", str(done["file"]), "--json")

    assert imported.exit_code == 0, imported.output
    assert imported.json()["events"] == status["head"]["position"] == done["events"]
    restored = _run(new, "status", "--json").json()
    assert restored["ledger_id"] == status["ledger_id"]
    assert restored["created_at"] == status["created_at"]
    assert restored["head"] == status["head"]
    assert restored["name"] == "Ada"
    assert _run(new, "verify").exit_code == 0
    assert same_read_models(mind_home, new)


def test_the_export_file_has_a_header_and_one_readable_line_per_event(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)

    done = _export(cli, tmp_path / "out")

    lines = Path(str(done["file"])).read_text().splitlines()
    header, events = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert header["format"] == "mindledger-export" and header["events"] == len(events)
    assert header["version"] == 3
    assert header["head"] == events[-1]["hash"] == done["head"]
    assert events[0]["prev"] == header["genesis"]
    assert [e["position"] for e in events] == list(range(1, len(events) + 1))
    opened = next(e for e in events if e["topic"] == "mind.commitment.opened")
    assert set(opened["state"]["text"]) == {"$sealed", "c"}  # as the ledger stores it
    assert opened_payload(opened)["text"] == "Send the report on Friday"  # by its line's key
    fields = ["aggregate", "topic", "version", "keys", "state", "position", "prev", "hash"]
    assert all(list(e) == fields for e in events)  # one form: the fixed-width fields last
    assert done["bytes"] == Path(str(done["file"])).stat().st_size


def test_verify_export_passes_an_export_without_a_mind(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    done = _export(cli, tmp_path / "out")

    checked = _run(tmp_path / "nowhere", "verify", "--export", str(done["file"]), "--json")
    deep = _run(tmp_path / "nowhere", "verify", "--export", str(done["file"]), "--deep", "--json")

    assert checked.exit_code == deep.exit_code == 0, (checked.output, deep.output)
    assert (checked.json()["ok"], checked.json()["level"]) == (True, "integrity")
    assert (deep.json()["ok"], deep.json()["level"]) == (True, "deep")
    assert checked.json()["head"] == deep.json()["head"] == done["head"]
    assert not (tmp_path / "nowhere").exists()


def test_deep_without_an_export_file_is_refused_in_one_line(tmp_path: Path) -> None:
    refused = _run(tmp_path / "nowhere", "verify", "--deep")

    assert refused.exit_code == 2
    assert "--deep checks an export file" in refused.stderr
    assert "Traceback" not in refused.output + refused.stderr


def test_verify_help_teaches_both_levels() -> None:
    shown = CliRunner().invoke(mind, ["verify", "--help"])

    assert shown.exit_code == 0
    assert "--deep" in shown.output and "integrity" in shown.output
    assert "mind import ledger" in shown.output


def test_verify_export_checks_a_kept_head_hash_against_the_file(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    kept = cli("status", "--json").json()["head"]
    done = _export(cli, tmp_path / "out")
    file = str(done["file"])

    found = _run(tmp_path / "nowhere", "verify", "--export", file, "--head", kept["hash"])
    found_json = _run(
        tmp_path / "nowhere", "verify", "--export", file, "--head", kept["hash"], "--json"
    )
    made_up = _run(tmp_path / "nowhere", "verify", "--export", file, "--head", "0" * 64)
    made_up_json = _run(
        tmp_path / "nowhere", "verify", "--export", file, "--head", "0" * 64, "--json"
    )

    assert found.exit_code == 0, found.stderr
    assert found_json.json()["anchor"] == {"hash": kept["hash"], "position": kept["position"]}
    assert made_up.exit_code == 1
    assert made_up.stderr.startswith("BROKEN: --head 0000000000000000... is not the hash")
    assert made_up_json.exit_code == 1
    assert made_up_json.json()["ok"] is False
    assert made_up_json.json()["anchor"] == {"hash": "0" * 64, "position": None}


def test_a_changed_payload_is_refused_by_verify_and_import_with_its_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    path = Path(str(_export(cli, tmp_path / "out")["file"]))
    lines = path.read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, 1) if '"mind.commitment.opened"' in line)
    event = json.loads(lines[number - 1])
    assert opened_payload(event)["text"] == "Send the report on Friday"
    sealed = event["state"]["text"]["c"]
    changed = sealed[:10] + ("B" if sealed[10] == "A" else "A") + sealed[11:]
    lines[number - 1] = lines[number - 1].replace(sealed, changed)  # the sealed text edited
    path.write_text("".join(lines))
    new = tmp_path / "restored"

    checked = cli("verify", "--export", str(path))
    imported = _run(new, "import", "ledger", str(path))

    assert checked.exit_code == 1
    assert f"BROKEN at line {number}: the hash does not recompute" in checked.stderr
    assert "BROKEN" not in checked.output  # the error goes to stderr, as every error does
    assert imported.exit_code == 1
    assert f"line {number}: the hash does not recompute" in imported.stderr
    assert not new.exists()  # nothing written: not even a half home


def test_a_cut_export_is_refused_and_leaves_no_home(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    path = Path(str(_export(cli, tmp_path / "out")["file"]))
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-2]))
    new = tmp_path / "parent" / "restored"

    imported = _run(new, "import", "ledger", str(path))

    assert imported.exit_code == 1
    assert f"line {len(lines) - 1}: the file ends after" in imported.stderr
    assert not (tmp_path / "parent").exists()


def test_a_refused_import_into_an_empty_folder_leaves_it_empty_with_its_mode(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    path = Path(str(_export(cli, tmp_path / "out")["file"]))
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))  # cut short: refused after the home was opened
    new = tmp_path / "empty"
    new.mkdir()
    new.chmod(0o755)

    imported = _run(new, "import", "ledger", str(path))

    assert imported.exit_code == 1
    assert "the file ends after" in imported.stderr
    assert list(new.iterdir()) == []
    assert new.stat().st_mode & 0o777 == 0o755


def test_an_export_of_no_events_passes_integrity_but_not_deep_nor_import(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    path = Path(str(_export(cli, tmp_path / "out")["file"]))
    header = json.loads(path.read_text().splitlines()[0])
    header.update(events=0, head=header["genesis"])  # made by hand: the genesis alone
    path.write_text(json.dumps(header, sort_keys=True, separators=(",", ":")) + "\n")
    new = tmp_path / "restored"

    integrity = cli("verify", "--export", str(path))
    deep = cli("verify", "--export", str(path), "--deep")
    imported = _run(new, "import", "ledger", str(path))

    assert integrity.exit_code == 0
    assert deep.exit_code == 1
    assert deep.stderr.strip() == (
        "BROKEN at line 2: no events: a ledger begins with its mind's mind.identity.created"
    )
    assert imported.exit_code == 1
    assert "line 2: no events" in imported.stderr
    assert not new.exists()


def test_import_into_a_home_with_a_mind_is_refused(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    path = str(_export(cli, tmp_path / "out")["file"])
    before = cli("status", "--json").json()["head"]

    imported = cli("import", "ledger", path)

    assert imported.exit_code == 1
    assert "already holds a mind" in imported.stderr
    assert len(imported.stderr.strip().splitlines()) == 1
    assert cli("status", "--json").json()["head"] == before


def test_the_imported_mind_keeps_working(cli: Cli, mind_home: Path, tmp_path: Path) -> None:
    _fill(cli)
    path = str(_export(cli, tmp_path / "out")["file"])
    new = tmp_path / "restored"
    assert _run(new, "import", "ledger", path).exit_code == 0

    committed = _run(new, "commit", "A promise made after the import")

    assert committed.exit_code == 0, committed.output
    listed = _run(new, "commitments", "--json").json()
    assert "A promise made after the import" in [c["text"] for c in listed]
    assert _run(new, "verify").exit_code == 0


def test_markdown_transcript_shows_turns_commitments_identity_and_hashes(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)

    done = _export(cli, tmp_path / "out", "md")

    text = Path(str(done["file"])).read_text()
    head = cli("status", "--json").json()["head"]["hash"]
    assert "> When is the report due?" in text and "> Noted." in text
    assert "commitment **opened**" in text and "draft the report Thursday" in text
    assert "identity **name adopted**: Ada" in text
    assert head in text
    assert "- hash: `" in text  # each turn's hash
    assert "- opened: " in text  # what the turn's reply committed to, inside the turn


def test_markdown_transcript_shows_hostile_html_and_links_as_inert_text(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    hostile = (
        '<script>alert("x")</script> <img src=x onerror=alert(1)> '
        "[click](javascript:alert(1)) <javascript:alert(2)> & `code`"
    )
    assert cli("commit", hostile).exit_code == 0
    turn = cli("turn", hostile, "--model", "mock", "--mock-reply", f"Reply {hostile}")
    assert turn.exit_code == 0, turn.output

    text = Path(str(_export(cli, tmp_path / "out", "md")["file"])).read_text()

    assert "<" not in text and ">" not in text.replace("\n> ", "\n").removeprefix("> ")
    assert "](" not in text.replace("\\](", "")
    assert '&lt;script&gt;alert("x")&lt;/script&gt;' in text
    assert "\\[click\\](javascript:alert(1))" in text
    assert "&amp; \\`code\\`" in text
    assert text.count("&lt;img src=x onerror=alert(1)&gt;") == 3  # commitment, turn, reply


def test_export_refuses_the_homes_own_folder(cli: Cli, mind_home: Path) -> None:
    refused = cli("export", str(mind_home), "--format", "jsonl")

    assert refused.exit_code == 1
    assert "own folder" in refused.stderr
    assert not (mind_home / "ledger.jsonl").exists()


def test_chat_export_writes_the_ledger_and_the_transcript(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    lines = f"/export {tmp_path / 'a'}\n/export {tmp_path / 'b'} md\n/exit\n"

    done = cli("chat", "--model", "mock", "--mock-reply", "hi", input=lines)

    assert done.exit_code == 0, done.output
    assert (tmp_path / "a" / "ledger.jsonl").exists()
    assert (tmp_path / "b" / "transcript.md").read_text().startswith("# Mind transcript")
    assert cli("verify", "--export", str(tmp_path / "a" / "ledger.jsonl")).exit_code == 0


def test_an_overlong_line_is_refused_with_its_number_before_it_is_read_whole(
    cli: Cli, mind_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.adapters import export_check

    _fill(cli)
    path = Path(str(_export(cli, tmp_path / "out")["file"]))
    lines = path.read_bytes().splitlines(keepends=True)
    longest = max(len(line) for line in lines)
    monkeypatch.setattr(export_check, "MAX_LINE_BYTES", longest)
    path.write_bytes(b"".join(lines[:2]) + b"x" * (longest + 10) + b"\n")
    new = tmp_path / "restored"

    checked = _run(tmp_path / "nowhere", "verify", "--export", str(path))
    imported = _run(new, "import", "ledger", str(path))

    assert checked.exit_code == 1
    assert "BROKEN at line 3: the line is longer than" in checked.stderr
    assert imported.exit_code == 1
    assert "line 3: the line is longer than" in imported.stderr
    assert not new.exists()


def test_a_line_with_a_stray_field_or_no_header_is_named_precisely(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    path = Path(str(_export(cli, tmp_path / "out")["file"]))
    lines = path.read_text().splitlines(keepends=True)
    event = json.loads(lines[1])
    stray = tmp_path / "stray.jsonl"
    stray.write_text(lines[0] + json.dumps({**event, "evil": 1}) + "\n" + "".join(lines[2:]))
    headless = tmp_path / "headless.jsonl"
    headless.write_text("".join(lines[1:]))

    extra = _run(tmp_path / "nowhere", "verify", "--export", str(stray))
    no_header = _run(tmp_path / "nowhere", "verify", "--export", str(headless))

    assert extra.exit_code == 1
    assert extra.stderr.strip() == "BROKEN at line 2: unexpected fields ['evil']"
    assert no_header.exit_code == 1
    assert "BROKEN at line 1: not a header" in no_header.stderr


def _as_version_2(home: Path, path: Path) -> Path:
    """The home's ledger exported as the previous release wrote it (version 2)."""
    from mindledger.adapters.ledger_export import Genesis, export_lines
    from mindledger.compose import Home, open_keys, open_reader

    reader, keys = open_reader(Home(home)), open_keys(Home(home))
    try:
        events, head = reader.head()
        rows = reader.rows(stop=events)
        lines = export_lines(Genesis(*reader.meta()), rows, events, head, keys, version=2)
        path.write_bytes(b"".join(lines))
    finally:
        keys.close()
        reader.close()
    return path


def test_a_version_2_export_still_verifies_at_both_levels_and_imports_to_the_same_head(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    kept = cli("status", "--json").json()["head"]
    old = _as_version_2(mind_home, tmp_path / "v2.jsonl")
    new = tmp_path / "restored"

    checked = _run(tmp_path / "nowhere", "verify", "--export", str(old), "--json")
    deep = _run(tmp_path / "nowhere", "verify", "--export", str(old), "--deep", "--json")
    imported = _run(new, "import", "ledger", str(old), "--json")

    assert json.loads(old.read_bytes().splitlines()[0])["version"] == 2
    assert '"payload":' in old.read_text()
    assert (checked.json()["ok"], checked.json()["level"]) == (True, "integrity")
    assert (deep.json()["ok"], deep.json()["level"]) == (True, "deep")
    assert checked.json()["head"] == deep.json()["head"] == kept["hash"]
    assert imported.exit_code == 0, imported.output
    assert _run(new, "status", "--json").json()["head"] == kept
    assert same_read_models(mind_home, new)


def test_export_verify_import_round_trip_keeps_the_head_and_an_edit_fails_in_one_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    _fill(cli)
    kept = cli("status", "--json").json()["head"]
    path = Path(str(_export(cli, tmp_path / "out")["file"]))
    checked = _run(tmp_path / "nowhere", "verify", "--export", str(path), "--head", kept["hash"])
    imported = _run(tmp_path / "restored", "import", "ledger", str(path))
    data = path.read_bytes()
    at = data.index(b'"position":3,') + len(b'"position":')
    path.write_bytes(data[:at] + b"4" + data[at + 1 :])

    broken = _run(tmp_path / "nowhere", "verify", "--export", str(path))

    assert checked.exit_code == imported.exit_code == 0, (checked.stderr, imported.stderr)
    assert _run(tmp_path / "restored", "status", "--json").json()["head"] == kept
    assert broken.exit_code == 1 and broken.output == ""
    assert broken.stderr == "BROKEN at line 4: position 4 where 3 belongs\n"
