"""Threads end to end: verified work, refusals, verdicts, triage, the gate and its ticks.

Time is an input: MIND_NOW sets every clock; file modification times are real (the cycle of a
turn at 2026-05-01 started before any file this test writes, unless the test backdates it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mindledger.domain.tension import accrued
from tests.conftest import Result

Cli = Callable[..., Result]
T0 = "2026-05-01T09:00:00Z"


def at(monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    monkeypatch.setenv("MIND_NOW", when)


def say(cli: Cli, reply: str, text: str = "work on it") -> dict[str, Any]:
    result = cli("turn", text, "--model", "mock", "--mock-reply", reply, "--json")
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = result.json()
    return data


def live(cli: Cli, as_of: str | None = None) -> dict[str, dict[str, Any]]:
    args = ["threads", "--json"] + (["--as-of", as_of] if as_of else [])
    return {t["id"]: t for t in cli(*args).json()}


def open_thread(cli: Cli, label: str, content: str = "something to come back to") -> str:
    return str(cli("thread", "open", label, "--content", content).output.strip())


@pytest.fixture
def workspace(cli: Cli, mind_home: Path) -> Path:
    folder = mind_home / "workspace"
    folder.mkdir(exist_ok=True)
    return folder


def test_a_changed_workspace_file_credits_work_and_resets_the_clock(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = open_thread(cli, "Why did the import fail?")
    (workspace / "import-notes.md").write_text("the CSV had a BOM")
    at(monkeypatch, "2026-05-02T09:00:00Z")

    outcome = say(cli, f'Found it.\nTHREAD-WORK: {tid} {{"file": "import-notes.md"}}')
    after = live(cli, "2026-05-02T10:00:00Z")[tid]

    assert outcome["rejections"] == []
    assert after["hours_unworked"] == 1.0
    assert after["tension"] == pytest.approx(accrued(24) - 1.0 + accrued(1), abs=1e-6)
    assert after["status"] == "worked"


def test_a_credit_never_takes_tension_below_zero(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = open_thread(cli, "Small thing")
    (workspace / "a.txt").write_text("done")
    at(monkeypatch, "2026-05-01T10:00:00Z")

    say(cli, f'THREAD-WORK: {tid} {{"file": "a.txt"}}')

    assert live(cli, "2026-05-01T10:00:00Z")[tid]["tension"] == 0.0


def test_one_credit_per_thread_and_one_thread_per_artifact_in_a_turn(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = open_thread(cli, "First question"), open_thread(cli, "Second question")
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text(name)
    at(monkeypatch, "2026-05-02T09:00:00Z")

    outcome = say(
        cli,
        "\n".join(
            [
                f'THREAD-WORK: {first} {{"file": "a.txt"}}',
                f'THREAD-WORK: {first} {{"file": "b.txt"}}',
                f'THREAD-WORK: {second} {{"file": "a.txt"}}',
            ]
        ),
    )
    reasons = [r["reason"] for r in outcome["rejections"]]

    assert len(reasons) == 2
    assert "one credit per thread per turn" in reasons[0]
    assert "one artifact credits one thread" in reasons[1]
    assert live(cli)[first]["hours_unworked"] == 0.0
    assert live(cli)[second]["hours_unworked"] == 24.0


@pytest.mark.parametrize(
    ("work", "expected"),
    [
        ('{"file": "old.txt"}', "before this cycle started"),
        ('{"file": "/etc/passwd"}', "is absolute"),
        ('{"file": "../ledger.sqlite"}', "uses '..'"),
        ('{"file": "missing.txt"}', "no file"),
        ('{"file": "journal.md"}', "ledger or journal file"),
        ('{"file": "store.sqlite-wal"}', "ledger or journal file"),
        ('{"file": "escape"}', "leads outside the workspace"),
        ('{"commitment": "c0000000000"}', "was not closed with evidence in this turn"),
        ('{"tool": "pytest"}', "no tool 'pytest' ran in this turn"),
        ('{"note": "I thought hard"}', "THREAD-WORK needs one of"),
        ("not json", "malformed JSON"),
    ],
)
def test_every_unverified_claim_of_work_is_refused_recorded_and_shown_next_turn(
    cli: Cli,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    work: str,
    expected: str,
) -> None:
    tid = open_thread(cli, "Open question")
    (workspace / "old.txt").write_text("written long ago")
    os.utime(workspace / "old.txt", (1_700_000_000, 1_700_000_000))  # 2023: before the cycle
    (workspace / "journal.md").write_text("diary")
    (workspace / "store.sqlite-wal").write_text("wal")
    (workspace / "escape").symlink_to(tmp_path)
    at(monkeypatch, "2026-05-02T09:00:00Z")

    refused = say(cli, f"I worked on it.\nTHREAD-WORK: {tid} {work}")
    following = say(cli, "ok", text="and now?")

    assert len(refused["rejections"]) == 1 and expected in refused["rejections"][0]["reason"]
    assert live(cli)[tid]["hours_unworked"] == 24.0  # nothing credited
    notices = [c["reason"] for c in following["context"] if c["kind"] == "notice"]
    assert "refused in the last turn" in notices


def test_a_commitment_closed_with_evidence_in_the_same_turn_credits_work(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = open_thread(cli, "Ship the report")
    bare = cli("commit", "Draft the report").output.strip()
    cid = cli("commit", "Send the report").output.strip()
    at(monkeypatch, "2026-05-02T09:00:00Z")

    outcome = say(
        cli,
        "\n".join(
            [
                f"CLOSE: {bare} drafted",
                f'THREAD-WORK: {tid} {{"commitment": "{bare}"}}',
                f"CLOSE: {cid} sent, see #1",
                f'THREAD-WORK: {tid} {{"commitment": "{cid}"}}',
            ]
        ),
    )

    assert [r["reason"] for r in outcome["rejections"]] == [
        f"commitment {bare} was not closed with evidence in this turn "
        "(CLOSE: cid reason citing #N first)"
    ]
    assert live(cli)[tid]["hours_unworked"] == 0.0


def test_fifty_mentions_change_the_counter_and_nothing_else(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mentioned, quiet = open_thread(cli, "Mentioned often"), open_thread(cli, "Never mentioned")
    for _ in range(50):
        say(cli, f"Still thinking about {mentioned}.", text="news?")

    threads = live(cli, "2026-05-02T09:00:00Z")

    assert threads[mentioned]["mentions"] == 50
    assert threads[quiet]["mentions"] == 0
    assert threads[mentioned]["tension"] == threads[quiet]["tension"] == pytest.approx(accrued(24))
    assert threads[mentioned]["hours_unworked"] == 24.0


def test_a_reply_opens_threads_and_a_claimed_origin_is_downgraded_and_recorded(
    cli: Cli, mind_home: Path
) -> None:
    outcome = say(
        cli,
        "\n".join(
            [
                'THREAD: {"label": "Is the cache stale?", "content": "Saw old data"}',
                'THREAD: {"label": "User wants a recap", "content": "Asked", "origin": "user"}',
                'THREAD: {"label": "is the cache STALE?", "content": "again"}',
            ]
        ),
    )
    threads = {t["label"]: t for t in cli("threads", "--json").json()}
    rows = cli(
        "query", "SELECT label, origin, claimed_origin FROM threads ORDER BY label", "--json"
    )

    assert len(outcome["rejections"]) == 1
    assert "already holds" in outcome["rejections"][0]["reason"]
    assert {t["origin"] for t in threads.values()} == {"assistant"}
    assert [r["claimed_origin"] for r in rows.json()] == [None, "user"]


def test_verdicts_need_what_they_name_and_tombstones_stay_frozen(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, c = open_thread(cli, "Question A"), open_thread(cli, "Question B"), open_thread(cli, "C")
    (workspace / "answer.md").write_text("42")
    at(monkeypatch, "2026-05-02T09:00:00Z")

    outcome = say(
        cli,
        "\n".join(
            [
                f'THREAD-RESOLVE: {a} {{"verdict": "answered"}}',
                f'THREAD-RESOLVE: {a} {{"verdict": "answered", "artifact": "answer.md"}}',
                f'THREAD-RESOLVE: {b} {{"verdict": "superseded", "artifact": "answer.md"}}',
                f'THREAD-RESOLVE: {b} {{"verdict": "dissolved"}}',
                f'THREAD-RESOLVE: {c} {{"verdict": "answered", "artifact": "nowhere.md"}}',
            ]
        ),
    )
    everything = {t["id"]: t for t in cli("threads", "--all", "--json").json()}
    later = {
        t["id"]: t
        for t in cli("threads", "--all", "--as-of", "2026-06-01T00:00:00Z", "--json").json()
    }
    reopened = open_thread(cli, "Question A")

    reasons = [r["reason"] for r in outcome["rejections"]]
    assert len(reasons) == 4
    assert "needs an artifact" in reasons[0]
    assert "needs the superseding thread" in reasons[1]
    assert "needs a reason" in reasons[2]
    assert "no file" in reasons[3]
    assert everything[a]["status"] == "resolved" and everything[a]["artifact"] == "file:answer.md"
    assert later[a]["tension"] == everything[a]["tension"]  # frozen at resolution
    assert reopened != a and live(cli)[reopened]["status"] == "open"


def test_opening_beyond_the_cap_admits_the_thread_and_demands_triage(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("config", "set", "threads.max_live_threads", "3").exit_code == 0
    ids = []
    for i in range(4):
        at(monkeypatch, f"2026-05-01T{9 + i:02d}:00:00Z")
        ids.append(open_thread(cli, f"Question {i}"))
    at(monkeypatch, "2026-05-01T12:00:00Z")
    fifth = cli("thread", "open", "Question 4", "--content", "one more", "--json").json()

    outcome = say(cli, "ok")

    assert len(live(cli)) == 5  # nothing dropped
    assert fifth["triage"]["live"] == 5 and fifth["triage"]["cap"] == 3
    # lowest tension first: the newest threads; Question 4 and 3 were opened at the same hour
    assert [c["id"] for c in fifth["triage"]["candidates"]] == [
        ids[3],
        fifth["id"],
        ids[2],
        ids[1],
        ids[0],
    ]
    assert "triage demand" in [c["reason"] for c in outcome["context"] if c["kind"] == "notice"]


def test_a_sixty_day_outage_counts_as_one_day(cli: Cli, mind_home: Path) -> None:
    tid = open_thread(cli, "Long silence")

    after = live(cli, "2026-06-30T09:00:00Z")[tid]

    assert after["hours_unworked"] == 24.0
    assert after["tension"] == pytest.approx(accrued(24))


def test_settings_are_events_and_change_the_law_from_when_they_apply(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = open_thread(cli, "Configurable")
    bad = cli("config", "set", "threads.base_rate", "fast")
    negative = cli("config", "set", "threads.half_life", "--", "-1")
    at(monkeypatch, "2026-05-01T10:00:00Z")
    assert cli("config", "set", "threads.base_rate", "0.3").exit_code == 0

    shown = {r["key"]: r for r in cli("config", "show", "--json").json()}
    before = live(cli, "2026-05-01T09:30:00Z")[tid]["tension"]
    after = live(cli, "2026-05-01T11:00:00Z")[tid]["tension"]
    log = cli("log", "--json").json()

    assert bad.exit_code != 0 and "must be a number" in bad.stderr
    assert negative.exit_code != 0 and "out of range" in negative.stderr
    assert shown["threads.base_rate"] == {**shown["threads.base_rate"], "value": "0.3"}
    assert before == pytest.approx(accrued(0.5), abs=1e-6)
    assert after == pytest.approx(2 * accrued(2), abs=1e-6)
    assert "mind.identity.configured" in [e["type"] for e in log]


def test_the_gate_fires_first_then_suppresses_then_fires_on_tension_or_floor(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    nomodel = ["--model", "openai/gpt-4o-mini", "--json"]
    open_thread(cli, "Pressing")

    first = cli("tick", *nomodel).json()
    at(monkeypatch, "2026-05-01T12:00:00Z")
    calm = cli("tick", *nomodel).json()
    hot = cli("tick", "--now", "2026-05-01T22:00:00Z", *nomodel).json()

    assert (first["fired"], first["reason"]) == (True, "no cycle was ever recorded")
    assert first["status"] == "no_model" and "OPENAI_API_KEY" in first["note"]
    assert calm["fired"] is False and "<= threshold 2" in calm["reason"]
    # 13 h unworked: tension 2.01 > 2 (the floor alone would not fire: 10 h since the last cycle)
    assert hot["fired"] is True and "> threshold 2" in hot["reason"]
    assert hot["cycle"] == 2
    assert os.environ["MIND_NOW"] == "2026-05-01T12:00:00Z"  # --now changed this command only


def test_a_fired_tick_runs_a_turn_without_a_message_led_by_the_threads(
    cli: Cli, mind_home: Path
) -> None:
    tid = open_thread(cli, "Pressing")

    tick = cli("tick", "--model", "mock", "--mock-reply", f"Looking at {tid}.", "--json").json()
    turns = cli("query", "SELECT speaker, text, context FROM turns", "--json").json()

    assert tick["fired"] is True and tick["turn"]["status"] == "complete"
    assert turns[0]["speaker"] == "autonomy" and turns[0]["text"] == ""
    context = json.loads(turns[0]["context"])
    assert context[0]["kind"] == "thread" and context[0]["source_id"] == tid


def test_metrics_are_pending_under_a_hundred_cycles(cli: Cli, mind_home: Path) -> None:
    open_thread(cli, "One")
    cli("tick", "--model", "mock", "--mock-reply", "ok")

    figures = cli("threads", "--metrics", "--json").json()

    assert figures["rho_status"] == "PENDING"
    assert (figures["cycles"], figures["ticks"], figures["live_threads"]) == (1, 1, 1)


def test_replay_gives_every_thread_the_same_tension(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    a, b = open_thread(cli, "A"), open_thread(cli, "B")
    (workspace / "x.txt").write_text("x")
    at(monkeypatch, "2026-05-03T09:00:00Z")
    say(cli, f'THREAD-WORK: {a} {{"file": "x.txt"}}\nStill on {b}')
    at(monkeypatch, "2026-05-20T09:00:00Z")
    cli("tick", "--model", "mock", "--mock-reply", "ok")
    before = cli("threads", "--all", "--as-of", "2026-05-25T00:00:00Z", "--json").json()

    check = cli("replay", "--into", str(tmp_path / "r.duckdb"), "--swap", "--json")
    after = cli("threads", "--all", "--as-of", "2026-05-25T00:00:00Z", "--json").json()
    stored = cli("query", "SELECT id, tension, tension_as_of FROM threads ORDER BY id", "--json")

    assert check.exit_code == 0
    assert after == before
    assert all(r["tension"] is not None for r in stored.json())


@pytest.mark.parametrize("overfetch", [0, 50])  # credited threads filtered in SQL, or dropped after
def test_the_context_shortcut_picks_the_same_threads_as_evaluating_all(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch, overfetch: int
) -> None:
    from mindledger.compose import Home, read_model
    from mindledger.domain.clock import parse_time
    from mindledger.projections.queries.thread_queries import (
        extremes,
        lowest,
        ranked,
        settings_as_of,
    )

    monkeypatch.setattr(
        "mindledger.projections.queries.thread_queries.OVERFETCH_CREDITED", overfetch
    )

    ids = []
    for day in (1, 1, 2, 5, 9, 9, 12):
        at(monkeypatch, f"2026-05-{day:02d}T09:00:00Z")
        ids.append(open_thread(cli, f"Question {len(ids)}"))
    (workspace / "w.txt").write_text("w")
    at(monkeypatch, "2026-05-13T09:00:00Z")
    say(cli, f'THREAD-WORK: {ids[0]} {{"file": "w.txt"}}')
    now = parse_time("2026-05-14T09:00:00Z")

    with read_model(Home(Path(os.environ["MIND_HOME"]))) as con:
        params = settings_as_of(con, now)
        everything = ranked(con, now, params=params)
        top, calmest, live = extremes(con, now, params, 1 << 62, 3, 3)

    assert live == len(everything) == 7
    assert [r["stream_id"] for r in top] == [r["stream_id"] for r in everything[:3]]
    assert [r["stream_id"] for r in calmest] == [r["stream_id"] for r in lowest(everything, 3)]


def test_metrics_fail_when_tension_is_only_recency_and_pass_when_it_is_not(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cli("config", "set", "threads.floor_interval", "0")
    first = open_thread(cli, "Oldest")
    for hour, label in ((10, "Middle"), (11, "Newest")):
        at(monkeypatch, f"2026-05-01T{hour}:00:00Z")
        open_thread(cli, label)
    at(monkeypatch, "2026-05-01T12:00:00Z")
    for _ in range(100):
        cli("tick", "--model", "openai/gpt-4o-mini")

    only_recency = cli("threads", "--metrics", "--json").json()
    at(monkeypatch, "2026-05-01T12:30:00Z")
    say(cli, f"Thinking about {first} again.")  # touched, not worked: still the tensest
    at(monkeypatch, "2026-05-01T13:00:00Z")
    not_recency = cli("threads", "--metrics", "--json").json()

    assert (only_recency["cycles"], only_recency["ticks"]) == (100, 100)
    assert (only_recency["spearman_rho"], only_recency["rho_status"]) == (1.0, "FAIL")
    assert (not_recency["spearman_rho"], not_recency["rho_status"]) == (-0.5, "PASS")
    assert not_recency["reach"] == 0  # the same thread led every cycle


def test_the_next_turn_reads_what_was_refused_and_why(cli: Cli, mind_home: Path) -> None:
    from mindledger.compose import Home, read_model
    from mindledger.domain.clock import parse_time
    from mindledger.projections.queries.thread_queries import last_refusals
    from mindledger.projections.retrieval.thread_context import live_threads, notices

    tid = open_thread(cli, "Open question")
    say(cli, f'THREAD-WORK: {tid} {{"tool": "make"}}')

    with read_model(Home(Path(os.environ["MIND_HOME"]))) as con:
        view = live_threads(con, parse_time(T0), 1 << 62)
        texts = [n.text for n in notices(view, last_refusals(con, None))]

    assert texts[0].startswith("[rule] Only verified work lowers")
    assert texts[1] == (
        f'refused: THREAD-WORK: {tid} {{"tool": "make"}} -- no tool \'make\' ran in this turn '
        "(ran: none); only the runtime records tool runs"
    )
