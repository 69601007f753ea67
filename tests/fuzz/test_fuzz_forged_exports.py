"""A forged ledger export, its chain recomputed with the public hash rule: one more event with an
unknown topic, a mistyped, missing or extra field, or out of stream order. `mind verify --export`
and `mind import ledger` refuse it at its line with nothing written, or the mind it becomes
works (commitments, recall, a turn); never a mind that cannot replay its own ledger."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mindledger.adapters.hash_chain import content_hash, link_hash
from mindledger.adapters.ledger_export import state_bytes
from mindledger.adapters.pydantic_mapping import canonical_json
from tests.e2e.test_cli_export_ledger import opened_payload
from tests.fuzz.harness import assert_well_behaved, invoke, json_values

EVIL_TOPICS = ["evil.unknown", "mind.commitment.reopened", "mind.x", ""]


@pytest.fixture(scope="module")
def export_lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The lines of an export of a small mind (a commitment, a turn, a concept, a thread)."""
    root = tmp_path_factory.mktemp("forged")
    home = str(root / "mind")
    reply = "Sure.\nCOMMIT: stretch hourly\nCONCEPT: user.stretch = moving"
    for args in (
        ["init", "--name", "Echo"],
        ["commit", "Send the report"],
        ["turn", "hi", "--model", "mock", "--mock-reply", reply],
        ["thread", "open", "Launch date", "--content", "Ask about May"],
        ["export", str(root / "out"), "--format", "jsonl"],
    ):
        assert invoke(["--home", home, *args]).exit_code == 0
    text = (root / "out" / "ledger.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _forge(lines: list[dict[str, Any]], event: dict[str, Any]) -> bytes:
    """The export with `event` appended, every hash recomputed by the public chain rule."""
    header, events = dict(lines[0]), lines[1:]
    prev = events[-1]["hash"]
    line = {**event, "position": len(events) + 1, "prev": prev, "schema": 1}
    state = state_bytes(line["payload"], line["time"], 1)
    line["hash"] = link_hash(
        prev, content_hash(line["topic"], line["aggregate"], line["version"], state)
    )
    header.update(events=len(events) + 1, head=line["hash"])
    return b"".join(canonical_json(o) + b"\n" for o in [header, *events, line])


@st.composite
def forged_events(draw: st.DrawFn, lines: list[dict[str, Any]]) -> dict[str, Any]:
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
    forged = _forge(export_lines, data.draw(forged_events(export_lines)))
    with tempfile.TemporaryDirectory() as tmp:
        path, home = Path(tmp) / "ledger.jsonl", Path(tmp) / "new"
        path.write_bytes(forged)

        checked = invoke(["verify", "--export", str(path)])
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
        "events out of stream order": {**opened, "version": 3, "payload": {}},
    }
    for reason, forged in forgeries.items():
        path = tmp_path / "ledger.jsonl"
        path.write_bytes(_forge(export_lines, {k: v for k, v in forged.items() if k != "keys"}))

        checked = invoke(["verify", "--export", str(path)])
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
