"""The projector: incremental equals replay, failures stop it at the event, exactly once."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindledger.adapters.pmm_import import import_pmm
from mindledger.compose import Home, open_reader
from mindledger.domain.application import Mind
from mindledger.domain.errors import MindError
from mindledger.projections.engine import handlers, registry
from mindledger.projections.engine.projector import ProjectionError, Projector
from mindledger.projections.engine.replay import differences, rebuild
from tests.foreign_files import SMALL_PMM, pmm_ledger, write_json
from tests.integration.ledger_factory import sqlite_mind

COMMANDS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "import",
                "commit",
                "close",
                "define",
                "alias",
                "relate",
                "thread",
                "resolve",
                "adopt",
                "remember",
                "verify",
                "dispute",
                "edit",
                "forget",
            ]
        ),
        st.integers(0, 4),
    ),
    min_size=1,
    max_size=25,
)


def run_command(app: Mind, name: str, n: int) -> None:
    try:
        if name == "commit":
            app.open_commitment(f"promise {n}")
        elif name == "close":
            app.close_commitment(_cid(app, n), "done")
        elif name == "define":
            app.define_concept(f"topic.t{n}", f"meaning {n}")
        elif name == "alias":
            app.alias_concept(f"topic.t{n}", f"alias {n}")
        elif name == "relate":
            app.relate_concepts(f"topic.t{n}", f"topic.t{(n + 1) % 5}", "next")
        elif name == "thread":
            app.open_thread(f"question {n}", f"content {n}")
        elif name == "resolve":
            app.resolve_thread(_any_thread(app), "dissolved", reason="moot")  # type: ignore[arg-type]
        elif name == "import":
            _import_pmm(app, n)
        elif name == "remember":
            app.remember(f"answer {n}", question=f"question {n}")
        elif name in ("verify", "dispute"):
            app.judge_knowledge(app.intent_hash_of(f"question {n}"), name)  # type: ignore[arg-type]
        elif name == "edit":
            app.edit_knowledge(app.intent_hash_of(f"question {n}"), f"edited answer {n}")
        elif name == "forget":
            app.delete_knowledge(app.intent_hash_of(f"question {n}"))
        else:
            app.adopt_name(f"Name {n}")
    except (MindError, LookupError):
        pass  # rejected commands change nothing; that is part of what replay must agree on


def _import_pmm(app: Mind, n: int) -> None:
    """A small PMM ledger (its first 4 + 3n events): messages, commitments, concepts, a name,
    claims and plain records, each file imported once and again."""
    with tempfile.TemporaryDirectory() as folder:
        path = write_json(Path(folder) / "pmm.json", pmm_ledger(SMALL_PMM[: 4 + 3 * n]))
        import_pmm(app, path)


def _cid(app: Mind, n: int) -> str:
    from mindledger.domain.commitment import commitment_cid

    return commitment_cid(f"promise {n}", app.text_keys)


def _any_thread(app: Mind) -> object:
    for row in app.recorder.select_notifications(start=1, limit=10_000):
        if row.topic == "mind.thread.opened":
            thread_id = row.originator_id
            if app.thread(thread_id).status != "resolved":  # type: ignore[arg-type]
                return thread_id
    raise LookupError("no thread")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(commands=COMMANDS, every=st.integers(1, 4))
def test_incremental_projection_equals_a_full_replay(
    tmp_path_factory: pytest.TempPathFactory, commands: list[tuple[str, int]], every: int
) -> None:
    folder = tmp_path_factory.mktemp("parity")
    app = sqlite_mind(folder, commands=0)
    reader = open_reader(Home(folder))
    live = Projector(folder / "live.duckdb")
    for i, (name, n) in enumerate(commands):
        run_command(app, name, n)
        if i % every == 0:
            live.catch_up(reader, batch=3)
    live.catch_up(reader)
    live.close()

    with pytest.MonkeyPatch.context() as patch:
        # The live file was written as VALUES rows; the replay writes Arrow batches.
        patch.setattr("mindledger.projections.engine.projector.FEW_ROWS", 0)
        rebuild(folder / "replayed.duckdb", reader)

    assert differences(folder / "live.duckdb", folder / "replayed.duckdb") == []


@pytest.mark.parametrize("column_rows", [1, 2])
def test_small_batches_sent_as_lists_per_column_equal_a_full_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, column_rows: int
) -> None:
    app = sqlite_mind(tmp_path, commands=3)
    for name in ("import", "thread", "resolve", "alias", "relate", "remember", "verify", "forget"):
        run_command(app, name, 2)
    reader = open_reader(Home(tmp_path))
    live = Projector(tmp_path / "live.duckdb")
    with monkeypatch.context() as patch:  # every table's rows as lists per column (`unnest`)
        patch.setattr("mindledger.projections.engine.projector.COLUMN_ROWS", column_rows)
        live.catch_up(reader, batch=5)
    live.close()

    monkeypatch.setattr("mindledger.projections.engine.projector.FEW_ROWS", 0)  # Arrow batches
    rebuild(tmp_path / "replayed.duckdb", reader)

    assert differences(tmp_path / "live.duckdb", tmp_path / "replayed.duckdb") == []


def test_two_replays_give_identical_tables(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=6)
    reader = open_reader(Home(tmp_path))

    rebuild(tmp_path / "a.duckdb", reader)
    rebuild(tmp_path / "b.duckdb", reader)

    assert differences(tmp_path / "a.duckdb", tmp_path / "b.duckdb") == []


def test_a_failing_handler_stops_at_that_event_with_the_position_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite_mind(tmp_path, commands=3)
    reader = open_reader(Home(tmp_path))
    closing = next(r.position for r in reader.rows() if r.topic == "mind.commitment.closed")

    def broken(rows: handlers.Rows, e: handlers.Ev) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setitem(registry.HANDLERS, "mind.commitment.closed", broken)
    projector = Projector(tmp_path / "rm.duckdb")

    with pytest.raises(ProjectionError, match=f"position {closing} .*disk full"):
        projector.catch_up(reader)

    assert projector.position() == closing - 1
    count = projector.con.execute("SELECT count(*), max(position) FROM events").fetchone()
    assert count == (closing - 1, closing - 1)


def test_a_catch_up_checkpointing_between_batches_gives_the_same_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite_mind(tmp_path, commands=12)
    reader = open_reader(Home(tmp_path))
    rebuild(tmp_path / "whole.duckdb", reader)
    checkpoints: list[int] = []
    monkeypatch.setattr("mindledger.projections.engine.projector.CHECKPOINT_EVENTS", 4)
    projector = Projector(tmp_path / "in-steps.duckdb")
    real = projector.con

    class Watched:
        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

        def execute(self, sql: str, *args: object) -> object:
            if sql == "CHECKPOINT":
                checkpoints.append(projector.position())
            return real.execute(sql, *args)

    projector.con = Watched()  # type: ignore[assignment]
    applied = projector.catch_up(reader, batch=3)
    projector.con = real
    projector.close()

    assert len(checkpoints) >= 2 and checkpoints == sorted(checkpoints)
    assert applied == open_reader(Home(tmp_path)).head()[0]
    assert differences(tmp_path / "whole.duckdb", tmp_path / "in-steps.duckdb") == []


def test_replay_refuses_to_overwrite_an_existing_file(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=1)
    (tmp_path / "exists.duckdb").write_bytes(b"")

    with pytest.raises(MindError, match="exists"):
        rebuild(tmp_path / "exists.duckdb", open_reader(Home(tmp_path)))


def test_a_read_model_built_for_other_tables_is_rebuilt_from_zero(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=2)
    reader = open_reader(Home(tmp_path))
    projector = Projector(tmp_path / "rm.duckdb")
    projector.catch_up(reader)
    projector.con.execute("UPDATE schema_version SET version = 'an older schema'")
    projector.close()

    reopened = Projector(tmp_path / "rm.duckdb")

    assert reopened.position() == 0
    reopened.catch_up(reader)
    assert reopened.position() == reader.head()[0]


def test_a_missing_tracking_row_never_makes_the_projector_apply_twice(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=2)
    reader = open_reader(Home(tmp_path))
    projector = Projector(tmp_path / "rm.duckdb")
    projector.con.execute("DELETE FROM tracking")  # as if killed between DDL and the first row

    projector.catch_up(reader)
    projector.catch_up(reader)

    head = reader.head()[0]
    assert projector.position() == head
    assert projector.con.execute("SELECT count(*) FROM events").fetchone() == (head,)


def test_a_read_model_whose_creator_died_before_its_header_is_created_again(
    tmp_path: Path,
) -> None:
    # DuckDB creates its file before writing the header: a projector SIGKILLed in between
    # (as the follower test once caught) left a zero-byte file that no later open accepted.
    sqlite_mind(tmp_path, commands=2)
    reader = open_reader(Home(tmp_path))
    (tmp_path / "rm.duckdb").touch()
    dead = tmp_path / "rm.duckdb.999999999.tmp"  # a temporary file of a process long gone
    dead.write_bytes(b"half a database")

    projector = Projector(tmp_path / "rm.duckdb")
    projector.catch_up(reader)

    assert projector.position() == reader.head()[0]
    projector.close()
    assert not list(tmp_path.glob("rm.duckdb*.tmp*"))


def test_an_entity_row_changed_in_place_by_a_handler_is_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small batch rewrites only the columns that changed: the comparison must see a list
    # that a handler extended in place, not only one it replaced.
    def aliased_in_place(rows: handlers.Rows, e: handlers.Ev) -> None:
        row = rows.entity("concepts", e.stream)
        row["aliases"].append(e.state["alias"])

    app = sqlite_mind(tmp_path, commands=0)
    app.define_concept("topic.x", "a meaning")
    app.alias_concept("topic.x", "first")
    reader = open_reader(Home(tmp_path))
    projector = Projector(tmp_path / "rm.duckdb")
    projector.catch_up(reader)
    monkeypatch.setitem(registry.HANDLERS, "mind.concept.aliased", aliased_in_place)
    app.alias_concept("topic.x", "second")
    projector.catch_up(reader)

    row = projector.con.execute("SELECT aliases FROM concepts WHERE token = 'topic.x'").fetchall()
    assert row == [(["first", "second"],)]


def test_an_imported_pmm_ledger_projects_the_same_incrementally_and_replayed(
    tmp_path: Path,
) -> None:
    app = sqlite_mind(tmp_path, commands=0)
    reader = open_reader(Home(tmp_path))
    live = Projector(tmp_path / "live.duckdb")
    for n in range(1, 5):
        _import_pmm(app, n)
        live.catch_up(reader, batch=7)
    live.close()

    rebuild(tmp_path / "replayed.duckdb", reader)

    assert differences(tmp_path / "live.duckdb", tmp_path / "replayed.duckdb") == []
    replayed = duckdb.connect(str(tmp_path / "replayed.duckdb"), read_only=True)
    kept = replayed.execute("SELECT count(*) FROM imported_records").fetchone()
    claims = replayed.execute("SELECT count(*) FROM claims WHERE turn_id IS NULL").fetchone()
    replayed.close()
    # Files of 7, 10, 13 and 16 events, each a longer export of the same PMM ledger: each adds
    # only its new events (16 in all); the claim is the 13th event.
    assert (kept, claims) == ((16,), (1,))


def test_imported_conversations_and_commitments_show_the_sources_times_and_title(
    tmp_path: Path,
) -> None:
    from mindledger.adapters.chatgpt_import import import_chatgpt
    from tests.foreign_files import branching_conversation

    app = sqlite_mind(tmp_path, commands=0)
    import_pmm(app, write_json(tmp_path / "pmm.json", pmm_ledger(SMALL_PMM)))
    import_chatgpt(app, write_json(tmp_path / "c.json", [branching_conversation()]))
    projector = Projector(tmp_path / "rm.duckdb")
    projector.catch_up(open_reader(Home(tmp_path)))

    rows = projector.con.execute(
        "SELECT source, strftime(started_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S'), title "
        "FROM conversations ORDER BY source"
    ).fetchall()
    opened = projector.con.execute(
        "SELECT text, strftime(opened_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S'), "
        "strftime(closed_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') FROM commitments ORDER BY text"
    ).fetchall()
    projector.close()

    # ChatGPT's first message (1.7e9 s) and PMM's first message (its event 2).
    assert rows[0] == ("chatgpt/conv-1", "2023-11-14 22:13:20", "Lighthouse")
    assert rows[1][1:] == ("2025-11-10 22:00:02", None)
    assert opened == [
        ("keep a lighthouse log", "2025-11-10 22:00:04", None),
        ("summarise the tests", "2025-11-10 22:00:05", "2025-11-10 22:00:06"),
    ]


@pytest.mark.parametrize("few_rows", [50, 0])  # VALUES rows, Arrow batches
def test_a_commitment_closed_in_its_own_batch_or_a_later_one_leaves_no_live_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, few_rows: int
) -> None:
    monkeypatch.setattr("mindledger.projections.engine.projector.FEW_ROWS", few_rows)
    app = sqlite_mind(tmp_path, commands=0)
    reader = open_reader(Home(tmp_path))
    same = app.open_commitment("Water the ferns on Friday").cid
    app.close_commitment(same, "watered")
    later = app.open_commitment("Return the ladder to Noor").cid
    kept = app.open_commitment("Call the piano tuner").cid
    projector = Projector(tmp_path / "rm.duckdb")
    projector.catch_up(reader)
    app.close_commitment(later, "returned")
    projector.catch_up(reader)

    live = dict(
        projector.con.execute(
            "SELECT c.cid, d.live FROM docs d JOIN commitments c ON d.position = c.opened_position"
        ).fetchall()
    )
    projector.close()
    rebuild(tmp_path / "replayed.duckdb", reader)

    assert live == {same: False, later: False, kept: True}
    assert differences(tmp_path / "rm.duckdb", tmp_path / "replayed.duckdb") == []


def test_the_index_counts_a_projector_keeps_are_what_its_tables_hold_after_every_batch(
    tmp_path: Path,
) -> None:
    from mindledger.projections.engine.kept_reads import INDEX_TOTALS, TRACKED_TERMS

    app = sqlite_mind(tmp_path, commands=3)
    reader = open_reader(Home(tmp_path))
    projector = Projector(tmp_path / "rm.duckdb")
    # Terms whose frequencies it counts (a sort of a large index picks them).
    projector.con.execute("INSERT INTO term_counts VALUES ('promise', 40), ('definition', 7)")
    seen: list[tuple[Any, Any]] = []

    def compare(_: int) -> None:
        for sql, table in ((INDEX_TOTALS, "tracking"), (TRACKED_TERMS, "term_counts")):
            kept = projector.kept.get(sql, (table,), lambda: None)
            seen.append((kept and sorted(kept), sorted(projector.con.execute(sql).fetchall())))

    projector.catch_up(reader, batch=2, on_batch=compare)
    projector.con.execute("DELETE FROM tracking")  # as if killed between DDL and the first row
    app.open_commitment("Return the promised ladder to Noor")
    projector.catch_up(reader, batch=2, on_batch=compare)
    projector.close()

    assert len(seen) > 8
    assert all(kept == rows and kept is not None for kept, rows in seen)
    assert seen[-2][1][0][0] == 1  # the tracking row made again holds only its own document
    assert dict(seen[-1][1])["promise"] > 40  # the commitments' documents were counted
