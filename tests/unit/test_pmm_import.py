"""`mind import pmm`: PMM's chain verified with its own rule, and each kind mapped here."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters.pmm_import import import_pmm, parse_pmm, pmm_records, verify_chain
from domain.application import Mind
from domain.changes import Changes
from domain.errors import InvalidInputError
from domain.foreign_apply import Done, import_records
from domain.foreign_import import ForeignFile, ForeignImport, import_id
from tests.foreign_files import PMM_DATA, PMM_FILES, SMALL_PMM, pmm_ledger, write_json

needs_pmm = pytest.mark.skipif(not PMM_DATA.exists(), reason="needs ../shared/data/pmm")


def positions(app: Mind) -> int:
    return app.recorder.max_notification_id() or 0


def kept(app: Mind, sha: str) -> ForeignImport:
    return app.load(ForeignImport, import_id("pmm", sha))


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
    assert kept(app, done["sha256"]).kept == {str(n) for n in range(1, len(SMALL_PMM) + 1)}
    started = json.loads(app.recorder.select_events(import_id("pmm", done["sha256"]))[0].state)
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
    log = app.commitment(kept(app, done["sha256"]).cids["aa11"])
    assert (log.text, log.origin, log.closed) == ("keep a lighthouse log", "assistant", False)
    summary = app.commitment(kept(app, done["sha256"]).cids["bb22"])
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
        ("commitment_close", "Commitment closed: zz", {"cid": "zz"}),
    ]
    path = write_json(tmp_path / "odd.json", pmm_ledger(odd))

    done = import_pmm(app, path)

    assert [r["became"] for r in done["kinds"]] == [
        "record (not accepted here)",
        "record (closes a commitment the file never opened)",
    ]


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
    assert kept(app, "ab" * 32).kept == {str(n) for n in range(1, len(SMALL_PMM) + 1)}


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
    assert app.commitment(kept(app, done["sha256"]).cids["p1"]).closed
