"""A forged ledger export, its chain recomputed with the public hash rule: one more event with an
unknown topic, a mistyped, missing or extra field, out of stream order, on a stream its payload
does not derive (a second stream for a commitment id, a concept, the identity), with plain text
where the mind seals its words (or sealed with the forger's own key), or naming what does not
exist (a relation to an undefined concept, a close of what was never opened, a turn number
out of turn). `mind verify --export` and `mind import ledger` refuse it at its line with
nothing written, or the mind it becomes works (commitments, recall, a turn) and keeps the
domain's invariants (one identity, no commitment id open twice); never a mind that cannot
replay its own ledger.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mindledger.domain.commitment import episode_id
from mindledger.domain.concept import concept_id
from mindledger.domain.identity import IDENTITY_ID
from mindledger.domain.turn_numbers import TURN_NUMBERS_ID
from tests.e2e.test_cli_export_ledger import opened_payload
from tests.forged_exports import export_lines as read_export
from tests.forged_exports import forge, sealed
from tests.fuzz.harness import assert_well_behaved, invoke, json_values

EVIL_TOPICS = ["evil.unknown", "mind.commitment.reopened", "mind.x", ""]


@pytest.fixture(scope="module")
def export_lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The lines of an export of a small mind (a closed and an open commitment, a turn, a
    concept, a thread)."""
    root = tmp_path_factory.mktemp("forged")
    home = str(root / "mind")
    reply = "Sure.\nCOMMIT: stretch hourly\nCONCEPT: user.stretch = moving"
    assert invoke(["--home", home, "init", "--name", "Echo"]).exit_code == 0
    assert invoke(["--home", home, "commit", "Send the report"]).exit_code == 0
    cid = json.loads(invoke(["--home", home, "commitments", "--json"]).stdout)[0]["cid"]
    for args in (
        ["close", cid, "--reason", "sent"],  # its CID is taken: a second stream must not be
        ["turn", "hi", "--model", "mock", "--mock-reply", reply],
        ["thread", "open", "Launch date", "--content", "Ask about May"],
        ["export", str(root / "out"), "--format", "jsonl"],
    ):
        assert invoke(["--home", home, *args]).exit_code == 0
    return read_export(root / "out" / "ledger.jsonl")


def _forge(lines: list[dict[str, Any]], event: dict[str, Any]) -> bytes:
    """The export with `event` appended, every hash recomputed by the public chain rule."""
    return forge(lines, event)


def _derived(topic: str, payload: dict[str, Any]) -> str | None:
    """The stream the domain would give this payload (None: a random one)."""
    if topic.startswith("mind.identity."):
        return IDENTITY_ID.hex
    if topic == "mind.turn_numbers.given":
        return TURN_NUMBERS_ID.hex
    try:
        if topic == "mind.commitment.opened":
            return episode_id(payload["cid"], payload["episode"]).hex
        if topic == "mind.concept.defined":
            return concept_id(payload["token"]).hex
    except (KeyError, TypeError):
        return None
    return None


@st.composite
def forged_events(draw: st.DrawFn, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Another event like one of the export's, its topic, a field or its stream order broken."""
    events = lines[1:]
    model = draw(st.sampled_from(events))
    payload = opened_payload(model)  # in the clear: the forger has no key to seal with
    topic = draw(st.sampled_from([model["topic"], model["topic"], *EVIL_TOPICS]))
    change = draw(st.sampled_from(["none", "retype", "drop", "add"]))
    if change == "retype" and payload:
        payload[draw(st.sampled_from(sorted(payload)))] = draw(json_values)
    elif change == "drop" and payload:
        del payload[draw(st.sampled_from(sorted(payload)))]
    elif change == "add":
        payload[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
    same_stream = draw(st.booleans())
    aggregate = model["aggregate"] if same_stream else uuid.uuid4().hex
    last = max(e["version"] for e in events if e["aggregate"] == model["aggregate"])
    version = draw(
        st.sampled_from([last + 1, last + 1, last, last + 2, 1])
        if same_stream
        else st.sampled_from([1, 1, 2])
    )
    return {
        "topic": topic,
        "aggregate": aggregate,
        "version": version,
        "time": events[-1]["time"],
        "payload": payload,
    }


@st.composite
def domain_forgeries(draw: st.DrawFn, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Another event like one of the export's that decodes and keeps its stream's order, but
    maybe on a stream its payload does not derive (a second stream for a commitment id, a
    concept, the identity), with its sealed fields in the clear or sealed under the forger's
    own keys, naming what does not exist, or numbered out of turn."""
    events = lines[1:]
    model = draw(st.sampled_from(events))
    topic, payload = model["topic"], opened_payload(model)
    change = draw(st.sampled_from(["none", "next", "next", "dangle"]))
    if change == "next":  # the next episode, turn number, a new token: maybe consistent
        for name in ("episode", "seq"):
            if isinstance(payload.get(name), int):
                payload[name] += draw(st.sampled_from([1, 1, 2, -1]))
        if "token" in payload:
            payload["token"] = draw(st.sampled_from(["user.stretch", "user.forged"]))
    elif change == "dangle":  # naming what does not exist
        for name in ("target", "cid", "turn_id"):
            if isinstance(payload.get(name), str):
                payload[name] = draw(st.sampled_from(["user.nowhere", "c0123456789", "ab" * 16]))
    where = draw(st.sampled_from(["same", "new", "derived", "derived"]))
    derived = _derived(topic, payload)
    if where == "derived" and derived is not None:
        aggregate = derived
    elif where == "same":
        aggregate = model["aggregate"]
    else:
        aggregate = uuid.uuid4().hex
    known = [e["version"] for e in events if e["aggregate"] == aggregate]
    forged = {
        "topic": topic,
        "aggregate": aggregate,
        "version": max(known, default=0) + 1,
        "time": events[-1]["time"],
        "payload": payload,
    }
    return sealed(forged) if draw(st.sampled_from([True, True, False])) else forged


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_forged_export_is_refused_at_its_line_or_makes_a_working_mind(
    export_lines: list[dict[str, Any]], data: st.DataObject
) -> None:
    forged = data.draw(forged_events(export_lines))
    _refused_or_working(export_lines, _forge(export_lines, forged))


def _refused_or_working(export_lines: list[dict[str, Any]], forged: bytes) -> None:
    """Verify and import agree: refused at the forged line with no home made, or imported into
    a mind that works and keeps the domain's invariants."""
    with tempfile.TemporaryDirectory() as tmp:
        path, home = Path(tmp) / "ledger.jsonl", Path(tmp) / "new"
        path.write_bytes(forged)

        checked = invoke(["verify", "--export", str(path), "--deep"])
        imported = invoke(["--home", str(home), "import", "ledger", str(path)])

        assert checked.crash is None and len(checked.stderr.splitlines()) <= 1, checked.describe()
        assert_well_behaved(imported)
        assert checked.exit_code == imported.exit_code, (checked.describe(), imported.describe())
        last = len(export_lines) + 1
        event("refused" if checked.exit_code else "imported")
        if checked.exit_code:
            assert f"BROKEN at line {last}: " in checked.stderr, checked.describe()
            assert imported.stderr.startswith(f"Error: line {last}: "), imported.describe()
            assert not home.exists()
            return
        for args in (
            ["commitments"],
            ["recall", "x"],
            ["turn", "hello", "--model", "mock", "--mock-reply", "ok"],
            ["verify"],
        ):
            run = invoke(["--home", str(home), *args])
            assert run.exit_code == 0, run.describe()
        _keeps_the_invariants(home)


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_forgery_of_what_the_domain_assumes_is_refused_or_keeps_its_invariants(
    export_lines: list[dict[str, Any]], data: st.DataObject
) -> None:
    forged = data.draw(domain_forgeries(export_lines))
    _refused_or_working(export_lines, _forge(export_lines, forged))


def _keeps_the_invariants(home: Path) -> None:
    """One identity, and no commitment id open twice (`mind close CID` closes the one open)."""
    identity = json.loads(invoke(["--home", str(home), "identity", "--json"]).stdout)
    assert [h["change"] for h in identity["history"]].count("created") == 1, identity
    listed = json.loads(invoke(["--home", str(home), "commitments", "--json"]).stdout)
    cids = [c["cid"] for c in listed]
    assert len(cids) == len(set(cids)), listed
    for cid in cids:
        closed = invoke(["--home", str(home), "close", cid])
        assert closed.exit_code == 0, closed.describe()
    left = json.loads(invoke(["--home", str(home), "commitments", "--json"]).stdout)
    assert left == [], left


def test_the_reported_forgeries_are_refused_at_their_line(
    export_lines: list[dict[str, Any]], tmp_path: Path
) -> None:
    events = export_lines[1:]
    opened = next(e for e in events if e["topic"] == "mind.commitment.opened")
    forgeries = {
        "unknown event type 'evil.unknown'": {
            **opened,
            "topic": "evil.unknown",
            "aggregate": uuid.uuid4().hex,
            "version": 1,
        },
        "field 'text'": {
            **opened,
            "aggregate": uuid.uuid4().hex,
            "version": 1,
            "payload": {**opened_payload(opened), "text": 39},
        },
        "events out of stream order": {**opened, "version": 5, "payload": {}},
    }
    for reason, forged in forgeries.items():
        path = tmp_path / "ledger.jsonl"
        path.write_bytes(_forge(export_lines, {k: v for k, v in forged.items() if k != "keys"}))

        checked = invoke(["verify", "--export", str(path), "--deep"])
        imported = invoke(["--home", str(tmp_path / "new"), "import", "ledger", str(path)])

        assert checked.exit_code == imported.exit_code == 1
        assert f"line {len(export_lines) + 1}: " in checked.stderr
        assert reason in checked.stderr and reason in imported.stderr, imported.describe()
        assert not (tmp_path / "new").exists()


def test_a_turn_on_a_mind_whose_read_model_cannot_catch_up_writes_nothing(tmp_path: Path) -> None:
    from eventsourcing.persistence import StoredEvent

    from mindledger.compose import Home, open_mind
    from tests.fuzz.harness import ledger_state

    home = tmp_path / "mind"
    assert invoke(["--home", str(home), "init", "--name", "Echo"]).exit_code == 0
    app = open_mind(Home(home))  # an event this version cannot project, written by an older bug
    app.recorder.insert_events(
        [StoredEvent(uuid.uuid4(), 1, "evil.unknown", b'{"timestamp":"2026-05-01T09:00:00Z"}')]
    )
    app.close()
    before = ledger_state(home)

    turns = [
        invoke(["--home", str(home), "turn", "hi", "--model", "mock", "--mock-reply", "ok"])
        for _ in range(2)
    ]

    for turn in turns:
        assert turn.exit_code == 1, turn.describe()
        assert_well_behaved(turn)
        assert "position 2 (evil.unknown)" in turn.stderr
        assert "nothing was written" in turn.stderr
    assert ledger_state(home) == before
