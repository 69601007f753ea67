"""`mind import pmm`: PMM's chain verified with its own rule, and each kind mapped here."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from mindledger.adapters.pmm_chain import source_key
from mindledger.adapters.pmm_import import import_pmm, parse_pmm, pmm_records, verify_chain
from mindledger.adapters.pmm_meaning import SPEAKERS
from mindledger.domain.application import Mind
from mindledger.domain.changes import Changes
from mindledger.domain.conversation import conversation_id
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.foreign_apply import Done, import_records
from mindledger.domain.foreign_import import ForeignFile, ForeignImport, import_id
from tests.foreign_files import PMM_DATA, PMM_FILES, SMALL_PMM, pmm_ledger, write_json

needs_pmm = pytest.mark.skipif(not PMM_DATA.exists(), reason="needs ../shared/data/pmm")


def positions(app: Mind) -> int:
    return app.recorder.max_notification_id() or 0


def kept(app: Mind, source_key: str) -> ForeignImport:
    """The import of one PMM source (its first message's hash, or a file's sha256)."""
    return app.load(ForeignImport, import_id("pmm", source_key))


def kept_ids(app: Mind, source_key: str) -> set[str]:
    return {pmm_id for pmm_id, _ in kept(app, source_key).kept}


@needs_pmm
@pytest.mark.parametrize("name", sorted(PMM_FILES))
def test_each_real_ledger_verifies_with_the_counts_its_source_states(name: str) -> None:
    events, forks = PMM_FILES[name]

    report = verify_chain(parse_pmm((PMM_DATA / name).read_bytes(), name))

    assert (report.events, report.breaks, len(report.forks)) == (events, (), forks)


def test_a_fork_is_reported_by_the_parent_and_both_children() -> None:
    ledger = pmm_ledger(SMALL_PMM[:3])
    twin = dict(ledger[2], id=99, content="another answer")
    twin["hash"] = "0" * 64
    ledger.append(twin)

    report = verify_chain(parse_pmm(json.dumps(ledger).encode(), "f"))

    assert report.forks == ("2: 3, 99",)
    assert report.breaks == ("99",)


def test_a_broken_hash_is_refused_naming_the_pmm_id_and_nothing_is_written(
    app: Mind, tmp_path: Path
) -> None:
    ledger = pmm_ledger(SMALL_PMM)
    ledger[4]["content"] = "tampered"
    path = write_json(tmp_path / "broken.json", ledger)
    before = positions(app)

    with pytest.raises(InvalidInputError, match=r"PMM id 5\)") as refused:
        import_pmm(app, path)

    assert "\n" not in str(refused.value)
    assert positions(app) == before


def test_accept_broken_imports_and_records_the_breaks(app: Mind, tmp_path: Path) -> None:
    ledger = pmm_ledger(SMALL_PMM)
    ledger[1]["content"] = "tampered question"
    path = write_json(tmp_path / "broken.json", ledger)

    done = import_pmm(app, path, accept_broken=True)

    assert done["breaks"] == ["2"]
    assert kept_ids(app, done["source_key"]) == {str(n) for n in range(1, len(SMALL_PMM) + 1)}
    started = json.loads(app.recorder.select_events(import_id("pmm", done["source_key"]))[0].state)
    assert started["breaks"] == ["2"]


def test_every_kind_becomes_what_it_means_here_and_the_rest_is_kept(
    app: Mind, tmp_path: Path
) -> None:
    path = write_json(tmp_path / "small.json", pmm_ledger(SMALL_PMM))

    done = import_pmm(app, path)

    became = {(r["kind"], r["became"]): r["count"] for r in done["kinds"]}
    assert became == {
        ("config", "record"): 1,
        ("user_message", "message"): 1,
        ("assistant_message", "message"): 1,
        ("commitment_open", "commitment opened"): 2,
        ("commitment_close", "commitment closed"): 1,
        ("concept_define", "concept defined"): 2,
        ("concept_alias", "concept alias"): 1,
        ("concept_relate", "concept relation"): 1,
        ("concept_bind_event", "concept binding"): 1,
        ("identity_adoption", "name adopted"): 1,
        ("claim", "claim"): 1,
        ("validation_failure", "validation failure"): 1,
        ("reflection", "reflection"): 1,
        ("autonomy_tick", "record"): 1,
    }
    assert (done["added"], done["skipped"]) == (len(SMALL_PMM), 0)
    assert app.identity().name == "Nova"
    lighthouse = app.concept("topic.lighthouse")
    assert lighthouse.aliases == ["topic.beacon"]
    assert lighthouse.relations == [("topic.cape", "located_at")]
    assert lighthouse.bindings == [("event", "pmm:2")]
    log = app.commitment(kept(app, done["source_key"]).cids["aa11"])
    assert (log.text, log.origin, log.closed) == ("keep a lighthouse log", "assistant", False)
    summary = app.commitment(kept(app, done["source_key"]).cids["bb22"])
    assert (summary.closed, summary.close_reason) == (True, "done")


def test_importing_the_same_file_again_adds_nothing(app: Mind, tmp_path: Path) -> None:
    path = write_json(tmp_path / "small.json", pmm_ledger(SMALL_PMM))
    import_pmm(app, path)
    before = positions(app)

    again = import_pmm(app, path)

    assert (again["added"], again["skipped"]) == (0, len(SMALL_PMM))
    assert positions(app) == before
    assert {r["became"] for r in again["kinds"]} == {"already imported"}


def test_a_meaning_this_mind_refuses_is_kept_as_a_record_with_the_reason(
    app: Mind, tmp_path: Path
) -> None:
    odd = [
        ("concept_define", json.dumps({"token": "ontology.Self(x)", "definition": "a self"}), {}),
        ("concept_define", json.dumps({"token": "ontology.Other(y)", "definition": "other"}), {}),
        ("commitment_close", "Commitment closed: zz", {"cid": "zz"}),
    ]
    path = write_json(tmp_path / "odd.json", pmm_ledger(odd))

    done = import_pmm(app, path)

    # The table says why, one row per reason (what the reason quotes left out) with its count.
    rows = [(r["became"], r["count"], r.get("reason", "")) for r in done["kinds"]]
    assert rows[0][:2] == ("record (not accepted here)", 2)
    assert rows[0][2].startswith("concept token '…' is not valid")
    assert rows[1] == ("record (closes a commitment the file never opened)", 1, "")


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{}",
        b"[]",
        b"[1]",
        b'[{"id": 1}]',
        b"\xff\xfe",
        json.dumps([{**pmm_ledger(SMALL_PMM[:1])[0], "content": 5}]).encode(),
        b'[{"id":1,"ts":null,"kind":"k","content":"\\ud800","meta":"{}","prev_hash":null,'
        b'"hash":"h"}]',
    ],
)
def test_a_file_not_in_pmm_shape_is_refused_in_one_line_before_anything_is_written(
    app: Mind, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    before = positions(app)

    with pytest.raises(InvalidInputError) as refused:
        import_pmm(app, path)

    assert "\n" not in str(refused.value)
    assert positions(app) == before


def test_a_batch_decided_again_after_a_lost_race_starts_from_fresh_state(app: Mind) -> None:
    events = parse_pmm(json.dumps(pmm_ledger(SMALL_PMM)).encode(), "small.json")
    file = ForeignFile("pmm", "small.json", "ab" * 32, len(events), "pmm/abab")

    def losing_the_first_race(command: Callable[[Changes], Done]) -> Done:
        command(Changes(app))  # decided, then beaten by another writer: nothing saved
        return app.decide(command)

    tally = import_records(
        losing_the_first_race, file, pmm_records(events, set()), app.clock(), batch=5
    )

    assert (tally.added, tally.skipped) == (len(SMALL_PMM), 0)
    assert kept_ids(app, "ab" * 32) == {str(n) for n in range(1, len(SMALL_PMM) + 1)}


def test_a_promise_opened_twice_is_closed_by_the_close_of_either(app: Mind, tmp_path: Path) -> None:
    opened = {"origin": "assistant", "text": "water the plants"}
    twice = [
        ("commitment_open", "Commitment opened: water the plants", {"cid": "p1", **opened}),
        ("commitment_open", "Commitment opened: water the plants", {"cid": "p2", **opened}),
        ("commitment_close", "Commitment closed: p2", {"cid": "p2", "reason": "watered"}),
    ]
    path = write_json(tmp_path / "twice.json", pmm_ledger(twice))

    done = import_pmm(app, path)

    assert [r["became"] for r in done["kinds"]] == [
        "commitment opened",
        "commitment opened (already open)",
        "commitment closed",
    ]
    assert app.commitment(kept(app, done["source_key"]).cids["p1"]).closed


def _deleted(ledger: list[dict[str, object]]) -> list[dict[str, object]]:
    return ledger[:3] + ledger[4:]


def _swapped(ledger: list[dict[str, object]]) -> list[dict[str, object]]:
    return [ledger[0], ledger[2], ledger[1], *ledger[3:]]


@pytest.mark.parametrize(
    ("cut", "expected"),
    [
        (_deleted, ["5: missing parent"]),
        (lambda ledger: ledger[3:], ["4: first event not the chain's start"]),
        (_swapped, ["3: parent after child"]),
    ],
    ids=["deleted", "truncated", "swapped"],
)
def test_a_deleted_truncated_or_swapped_event_is_a_link_break_and_refused(
    app: Mind,
    tmp_path: Path,
    cut: Callable[[list[dict[str, object]]], list[dict[str, object]]],
    expected: list[str],
) -> None:
    path = write_json(tmp_path / "cut.json", cut(pmm_ledger(SMALL_PMM)))
    before = positions(app)

    with pytest.raises(InvalidInputError, match="prev_hash does not link") as refused:
        import_pmm(app, path)

    assert verify_chain(parse_pmm(path.read_bytes(), "cut")).link_breaks == tuple(expected)
    assert "--accept-broken" in str(refused.value)
    assert positions(app) == before


def test_a_cut_file_imported_with_accept_broken_records_its_link_breaks(
    app: Mind, tmp_path: Path
) -> None:
    path = write_json(tmp_path / "cut.json", _deleted(pmm_ledger(SMALL_PMM)))

    done = import_pmm(app, path, accept_broken=True)

    assert (done["breaks"], done["link_breaks"]) == ([], ["5: missing parent"])
    started = json.loads(app.recorder.select_events(import_id("pmm", done["source_key"]))[0].state)
    assert started["link_breaks"] == ["5: missing parent"]


def test_a_longer_or_resaved_export_of_the_same_ledger_adds_only_new_events(
    app: Mind, tmp_path: Path
) -> None:
    ledger = pmm_ledger(SMALL_PMM)
    prefix = write_json(tmp_path / "prefix.json", ledger[:5])
    whole = write_json(tmp_path / "whole.json", ledger)
    resaved = tmp_path / "resaved.json"
    resaved.write_text(json.dumps(ledger, indent=1), encoding="utf-8")

    first = import_pmm(app, prefix)
    longer = import_pmm(app, whole)
    before = positions(app)
    again = import_pmm(app, resaved)

    assert (first["added"], longer["added"], longer["skipped"]) == (5, len(SMALL_PMM) - 5, 5)
    assert (again["added"], again["skipped"]) == (0, len(SMALL_PMM))
    assert positions(app) == before
    # One conversation, one import stream; the close (event 6) found what event 5 opened.
    assert first["source_key"] == longer["source_key"] == again["source_key"]
    assert app.commitment(kept(app, longer["source_key"]).cids["bb22"]).closed


def test_a_source_imported_before_its_keys_were_keyed_is_continued_in_its_conversation(
    app: Mind, tmp_path: Path
) -> None:
    ledger = pmm_ledger(SMALL_PMM)
    prefix = json.dumps(ledger[:2]).encode()  # the config and the first message
    events = parse_pmm(prefix, "prefix.json")
    source = str(source_key(events, tuple(SPEAKERS)))
    # What an import before keyed digests wrote: the stream named by the PMM hash itself.
    old = ForeignFile(
        "pmm",
        "prefix.json",
        hashlib.sha256(prefix).hexdigest(),
        2,
        f"pmm/{source[:16]}",
        source_key=source,
    )
    app.import_foreign(old, pmm_records(events, set()))
    before = positions(app)

    longer = import_pmm(app, write_json(tmp_path / "whole.json", ledger))

    assert (longer["added"], longer["skipped"]) == (len(SMALL_PMM) - 2, 2)
    assert kept_ids(app, source) == {str(n) for n in range(1, len(SMALL_PMM) + 1)}
    assert not app.recorder.select_events(import_id("pmm", longer["source_key"]))
    # The assistant's answer joined the conversation the first message is in.
    streams = {n.originator_id for n in app.recorder.select_notifications(before + 1, 1000)}
    assert conversation_id(f"pmm/{source[:16]}") in streams
    assert conversation_id(f"pmm/{longer['source_key'][:16]}") not in streams


def test_the_import_is_named_by_keyed_digests_only(app: Mind, tmp_path: Path) -> None:
    data = json.dumps(pmm_ledger(SMALL_PMM)).encode()
    source = source_key(parse_pmm(data, "small.json"), tuple(SPEAKERS))
    path = tmp_path / "small.json"
    path.write_bytes(data)

    done = import_pmm(app, path)

    started = app.load(ForeignImport, import_id("pmm", done["source_key"]))
    assert done["sha256"] == hashlib.sha256(data).hexdigest()  # told, never stored
    assert done["source_key"] == app.text_keys.keyed("import", str(source))
    assert started.file_sha256 == app.text_keys.keyed("import", done["sha256"])
    assert not app.recorder.select_events(import_id("pmm", str(source)))


def test_commitments_keep_the_times_pmm_gave_them(app: Mind, tmp_path: Path) -> None:
    path = write_json(tmp_path / "small.json", pmm_ledger(SMALL_PMM))

    done = import_pmm(app, path)

    cids = kept(app, done["source_key"]).cids
    opened = app.recorder.select_events(app.commitment(cids["aa11"]).id)
    state = json.loads(opened[0].state)
    assert state["opened_at"].startswith("2025-11-10T22:00:04")


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ({"id": 1.5}, "not a whole number"),
        ({"id": "BIG"}, "number of 5,001 digits"),
    ],
)
def test_a_bad_id_is_refused_in_our_words(
    app: Mind, tmp_path: Path, item: dict[str, object], says: str
) -> None:
    ledger = pmm_ledger(SMALL_PMM[:2])
    ledger[1].update(item)
    path = tmp_path / "bad.json"
    # Written as text: json cannot write (nor Python print) an int of 5,001 digits.
    path.write_text(json.dumps(ledger).replace('"BIG"', "1" + "0" * 5000), encoding="utf-8")

    with pytest.raises(InvalidInputError, match=says) as refused:
        import_pmm(app, path)

    assert "sys.set_int_max_str_digits" not in str(refused.value)
    assert "event 1 " not in str(refused.value)


def test_two_pmm_minds_that_share_the_default_prelude_are_both_imported_whole(
    app: Mind, tmp_path: Path
) -> None:
    # Every PMM mind starts with the same config events; after that their chains differ.
    other = list(SMALL_PMM)
    other[1] = ("user_message", "I am Ada; remember the observatory.", {"role": "user"})
    first = import_pmm(app, write_json(tmp_path / "a.json", pmm_ledger(SMALL_PMM)))

    second = import_pmm(app, write_json(tmp_path / "b.json", pmm_ledger(other)))

    assert first["source_key"] != second["source_key"]
    assert (second["added"], second["skipped"]) == (len(SMALL_PMM), 0)


def test_a_file_imported_when_imports_were_keyed_by_file_adds_nothing_again(
    app: Mind, tmp_path: Path
) -> None:
    path = write_json(tmp_path / "small.json", pmm_ledger(SMALL_PMM))
    events = parse_pmm(path.read_bytes(), "small.json")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    legacy = ForeignFile("pmm", "small.json", sha, len(events), f"pmm/{sha[:16]}")
    import_records(app.decide, legacy, pmm_records(events, set()), app.clock(), batch=50)
    before = positions(app)

    done = import_pmm(app, path)

    assert (done["added"], positions(app)) == (0, before)
