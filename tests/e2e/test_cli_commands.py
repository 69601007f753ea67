"""The `mind` command end to end: exact JSON, listings from the read model, clear errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]


def test_init_status_and_verify_on_a_fresh_mind(cli: Cli, home: Path) -> None:
    assert cli("init", "--name", "Echo").exit_code == 0

    status = cli("status", "--json").json()
    verified = cli("verify", "--json")

    assert (status["name"], status["head"]["position"], status["backend"]) == ("Echo", 1, "sqlite")
    assert len(status["ledger_id"]) == 32
    assert verified.exit_code == 0
    assert verified.json() == {
        "ok": True,
        "events": 1,
        "first_bad": None,
        "reason": None,
        "head": status["head"]["hash"],
        "anchors": [
            {
                "source": str(home / "ledger-head.json"),
                "position": 1,
                "hash": status["head"]["hash"],
                "status": "ok",
            },
            # init builds the read model (so the first listing prints from its summary): its
            # position's hash is checked too
            {"source": "read model", "position": 1, "hash": status["head"]["hash"], "status": "ok"},
        ],
    }


def test_commit_close_and_list_commitments(cli: Cli, mind_home: Path) -> None:
    cid = cli("commit", "Send the weekly report").output.strip()
    other = cli("commit", "Water the plants", "--json").json()["cid"]

    closed = cli("close", cid, "--reason", "sent")
    listed = cli("commitments", "--json").json()
    everything = cli("commitments", "--all", "--json").json()

    assert closed.exit_code == 0
    assert [(c["cid"], c["text"], c["status"]) for c in listed] == [
        (other, "Water the plants", "open")
    ]
    assert [(c["cid"], c["status"], c["close_reason"]) for c in everything] == [
        (other, "open", None),
        (cid, "closed", "sent"),
    ]
    assert everything[1]["opened_at"] == "2026-05-01T09:00:00+00:00"


def test_committing_open_text_again_says_nothing_changed(cli: Cli, mind_home: Path) -> None:
    cid = cli("commit", "Call the bank").output.strip()

    again = cli("commit", "call the bank.")

    assert again.exit_code == 0
    assert again.output.strip() == f"{cid} (already open; nothing changed)"
    assert cli("status", "--json").json()["head"]["position"] == 2


def test_concepts_with_aliases_and_relations(cli: Cli, mind_home: Path) -> None:
    cli("concept", "define", "project.alpha", "The billing rewrite")
    cli("concept", "define", "team.billing", "The billing team")
    cli("concept", "alias", "project.alpha", "billing rewrite")
    cli("concept", "relate", "project.alpha", "team.billing", "--as", "owned-by")

    concepts = cli("concepts", "--json").json()

    assert [(c["token"], c["version"], c["aliases"], c["relations"]) for c in concepts] == [
        (
            "project.alpha",
            1,
            ["billing rewrite"],
            [{"relation": "owned-by", "target": "team.billing"}],
        ),
        ("team.billing", 1, [], []),
    ]


def test_threads_open_list_and_resolve(cli: Cli, mind_home: Path) -> None:
    tid = cli("thread", "open", "Why did the import fail?", "--content", "On 3 May").output.strip()

    live = cli("threads", "--json").json()
    resolved = cli("thread", "resolve", tid, "--as", "dissolved", "--reason", "moot")
    after = cli("threads", "--json").json()
    everything = cli("threads", "--all", "--json").json()

    assert [(t["id"], t["label"], t["status"]) for t in live] == [
        (tid, "Why did the import fail?", "open")
    ]
    assert resolved.exit_code == 0
    assert after == []
    assert [(t["id"], t["status"], t["verdict"], t["reason"]) for t in everything] == [
        (tid, "resolved", "dissolved", "moot")
    ]


def test_identity_adopt_and_history(cli: Cli, mind_home: Path) -> None:
    cli("identity", "adopt", "Nova", "--reason", "chosen together")

    identity = cli("identity", "--json").json()

    assert identity["name"] == "Nova"
    assert [(h["change"], h["name"], h["via"]) for h in identity["history"]] == [
        ("created", "Echo", "created"),
        ("name_adopted", "Nova", "owner"),
    ]


def test_log_shows_position_time_type_and_hash(cli: Cli, mind_home: Path) -> None:
    cli("commit", "Send the weekly report")

    events = cli("log", "--json").json()
    commitments_only = cli("log", "--kind", "commitment", "--json").json()

    assert [(e["position"], e["type"]) for e in events] == [
        (1, "mind.identity.created"),
        (2, "mind.commitment.opened"),
    ]
    assert events[1]["time"] == "2026-05-01T09:00:00Z"
    assert len(events[1]["hash"]) == 64
    assert [e["position"] for e in commitments_only] == [2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["commit", ""], "commitment text is empty"),
        (["commit", "x" * 1_000_000], "limit is 4,000"),
        (["commit", "bell\x07ring"], "control character"),
        (["close", "cdeadbeef00"], "no commitment has CID 'cdeadbeef00'"),
        (["concept", "define", "Not A Token", "x"], "is not valid"),
        (["concept", "alias", "never.defined", "x"], "is not defined"),
        (["thread", "open", "x" * 121, "--content", "y"], "limit is 120"),
        (["thread", "resolve", "tffffffff", "--as", "dissolved", "--reason", "x"], "no thread"),
    ],
)
def test_bad_input_is_one_clear_error_line_and_changes_nothing(
    cli: Cli, mind_home: Path, args: list[str], message: str
) -> None:
    result = cli(*args)

    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert cli("status", "--json").json()["head"]["position"] == 1


def test_commands_on_an_empty_home_say_to_run_init(cli: Cli, home: Path) -> None:
    result = cli("commitments")

    assert result.exit_code == 1
    assert "run `mind init` first" in result.stderr
    assert not home.exists()


def test_a_bad_mind_now_is_a_clear_error(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_NOW", "yesterday")

    result = cli("commit", "anything")

    assert result.exit_code == 1
    assert "not ISO-8601" in result.stderr


def test_commit_with_thread_and_concepts_and_concept_bindings(cli: Cli, mind_home: Path) -> None:
    cli("concept", "define", "project.alpha", "The billing rewrite")
    tid = cli("thread", "open", "Ship alpha?", "--content", "When does alpha ship?").output.strip()

    cid = cli(
        "commit", "Ship alpha by June", "--thread", tid, "--concept", "project.alpha", "--json"
    ).json()["cid"]
    bound = cli("concept", "bind", "project.alpha", "--commitment", cid)
    listed = cli("commitments", "--json").json()
    near = cli("graph", "neighbors", "project.alpha", "--json").json()

    assert bound.exit_code == 0
    assert (listed[0]["thread"], listed[0]["concepts"]) == (tid, ["project.alpha"])
    assert [n["id"] for n in near] == [f"commitment:{cid}"]


def test_committing_about_an_unknown_concept_is_rejected(cli: Cli, mind_home: Path) -> None:
    result = cli("commit", "Ship beta", "--concept", "project.beta")

    assert result.exit_code == 1
    assert "concept 'project.beta' is not defined" in result.stderr
    assert cli("status", "--json").json()["head"]["position"] == 1


def test_threads_are_listed_by_tension_as_of_a_time(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = cli("thread", "open", "Old question", "--content", "asked first").output.strip()
    monkeypatch.setenv("MIND_NOW", "2026-05-01T21:00:00Z")
    new = cli("thread", "open", "New question", "--content", "asked later").output.strip()

    at_24h = cli("threads", "--as-of", "2026-05-02T09:00:00Z", "--json").json()

    assert [(t["id"], t["hours_unworked"]) for t in at_24h] == [(old, 24.0), (new, 12.0)]
    assert at_24h[0]["tension"] == pytest.approx(0.15 * 72 / math.log(2) * (2 ** (24 / 72) - 1))
    assert {"id", "label", "status", "tension", "hours_unworked", "mentions"} <= set(at_24h[0])
