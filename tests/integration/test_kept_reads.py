"""A kept read session keeps the results of reads whose tables only its projector writes
(`projections.engine.kept_reads`): a steady turn sends them no statement, and a change to any
of them, made by this process, another connection or another process, is in the very next
turn's context."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings
from mindledger.compose import Home, open_mind, turn_service
from mindledger.domain.turns import TurnOutcome, TurnService
from mindledger.projections.engine import readmodel
from mindledger.projections.engine.kept_reads import KeptReads
from mindledger.projections.retrieval.speakers import participants
from tests.integration.ledger_factory import sqlite_mind
from tests.integration.statement_log import log_statements

KEPT_TABLES = (
    "identity",
    "conversations",
    "config_changes",
    "liveness_gaps",
    "thread_work",
    "concept_names",
    "rejections",
    "FROM threads",
    "kind = 'commitment'",  # the open commitments
    "status = 'open' AND thread",  # the threads they serve
)


def _turn(service: TurnService, text: str) -> TurnOutcome:
    model = LiteLLMModel(ModelSettings(spec="mock", mock_reply="Noted."))
    outcome = service.run(text, model)
    assert outcome.status == "complete", outcome.failure
    return outcome


def _memory(outcome: TurnOutcome) -> str:
    """The memory block the model was sent (the system prompt names the mind too)."""
    sent = "\n".join(str(m.get("content")) for m in outcome.messages)
    return sent[sent.index("<memory>") : sent.index("</memory>")]


def _holds(outcome: TurnOutcome, seen: str | int) -> bool:
    """Whether the context shows `seen` threads (a number), an item `seen` found as its best
    channel, or the text `seen`."""
    if isinstance(seen, int):
        return sum(1 for item in outcome.context if item["kind"] == "thread") == seen
    return any(item["channel"] == seen for item in outcome.context) or seen in _memory(outcome)


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TurnService]:
    """A mind with three live threads, and its turn service keeping its session (no clock)."""
    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)
    app = sqlite_mind(tmp_path, commands=2)
    for label in ("Roof repair", "Tax return", "Piano practice"):
        app.open_thread(label, f"keep working on the {label.lower()}")
    with turn_service(Home(tmp_path)) as service:
        _turn(service, "Good morning")  # opens the session it keeps
        yield service


def _statements(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: bool) -> list[str]:
    """The statements of the third of three turns through one kept session."""
    log = log_statements(monkeypatch)
    if not keep:  # every read sent, as before reads were kept
        monkeypatch.setattr(KeptReads, "get", lambda self, key, tables, read: read())
    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)
    app = sqlite_mind(tmp_path, commands=2)
    for label in ("Roof repair", "Tax return"):
        app.open_thread(label, f"keep working on the {label.lower()}")
    with turn_service(Home(tmp_path)) as service:
        for n in range(3):
            log.clear()
            _turn(service, f"Please remember item {n} for next week")
        return list(log)


def test_a_steady_turn_sends_no_statement_to_the_tables_its_session_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _statements(tmp_path / "sent", monkeypatch, keep=False)
    monkeypatch.undo()

    after = _statements(tmp_path / "kept", monkeypatch, keep=True)

    assert [s for s in after if any(t in s for t in KEPT_TABLES)] == []
    assert [s for s in before if "FROM threads" in s]  # the mind has live threads to show
    assert len(after) <= len(before) - 8


def _elsewhere(home: Path, code: str) -> None:
    """Run `code` with `app` (the mind at `home`) in another process."""
    program = (
        "from pathlib import Path\n"
        "from datetime import UTC, datetime\n"
        "from mindledger.compose import Home, open_mind\n"
        "from mindledger.domain.conversation import Observed\n"
        f"app = open_mind(Home(Path({str(home)!r})))\n" + code
    )
    subprocess.run([sys.executable, "-c", program], check=True, timeout=120)


CHANGES = [
    # (the change, the turn's message, what the next context then holds: a text, or a count
    # of threads)
    ('app.adopt_name("Nova")', "Hello again", "Your name is Nova"),
    ('app.configure("threads.top_k", "1")', "Hello again", 1),
    ('app.open_thread("Garden plan", "water the tomatoes")', "Hello again", "Garden plan"),
    # found by its name (the lexical channel would find its words without the kept names)
    ('app.define_concept("garden.plan", "beds by the wall")', "What is garden.plan?", "concepts"),
    ('app.open_commitment("Water the plants")', "Hello again", "Water the plants"),
]


@pytest.mark.parametrize(("change", "message", "seen"), CHANGES)
@pytest.mark.parametrize("where", ["this process", "another process"])
def test_a_change_is_in_the_next_turns_context_through_the_kept_session(
    served: TurnService, tmp_path: Path, where: str, change: str, message: str, seen: str | int
) -> None:
    first = _turn(served, message)
    assert not _holds(first, seen)

    if where == "this process":  # its own connection to the ledger (its write releases the
        exec(change, {"app": open_mind(Home(tmp_path))})  # session: the next turn opens one)
    else:
        _elsewhere(tmp_path, change)
    after = _turn(served, message)

    assert _holds(after, seen)


def test_a_read_model_another_process_projected_into_is_read_anew(
    served: TurnService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "Nova" not in _memory(_turn(served, "Hello"))
    monkeypatch.setattr(readmodel, "LINGER_S", 0.05)  # released in time for the other process
    _turn(served, "Hello")

    _elsewhere(
        tmp_path,
        'app.adopt_name("Nova")\n'
        "from mindledger.compose import open_reader, read_model_paths\n"
        "from mindledger.projections.engine.readmodel import ensure_fresh\n"
        "home = Home(Path(app_home))\n"
        "ensure_fresh(read_model_paths(home), open_reader(home))\n".replace(
            "app_home", repr(str(tmp_path))
        ),
    )
    after = _turn(served, "Hello")

    assert "Nova" in _memory(after)


def test_a_new_participant_is_in_the_kept_participants_after_the_next_catch_up(
    served: TurnService, tmp_path: Path
) -> None:
    def kept_participants() -> list[str]:
        seen: list[list[str]] = []

        def read(session: readmodel.ReadSession) -> None:
            assert session.projector is not None and session.con is not None
            seen.append(participants(session.con, session.projector.kept))

        assert readmodel.use_lingering(Home(tmp_path).projector_lock, None, read)
        return seen[0]

    assert "Caroline" not in kept_participants()

    _elsewhere(
        tmp_path,
        "said = datetime(2026, 5, 1, tzinfo=UTC)\n"
        'app.import_conversation("chat/one", ["Caroline", "Mel"], '
        '[Observed(speaker="Caroline", text="I went hiking", said_at=said, source_id="1")])\n',
    )
    _turn(served, "Hello")

    assert "Caroline" in kept_participants()


def test_the_kept_thread_reads_answer_as_the_statements_at_any_time_and_position(
    tmp_path: Path,
) -> None:
    from datetime import UTC, datetime, timedelta

    from mindledger.compose import open_reader
    from mindledger.projections.engine.projector import Projector
    from mindledger.projections.retrieval.thread_context import live_threads

    app = sqlite_mind(tmp_path, commands=2)
    for label in ("Roof repair", "Tax return", "Piano practice"):
        app.open_thread(label, f"keep working on the {label.lower()}")
    app.configure("threads.top_k", "2")
    home = Home(tmp_path)
    projector = Projector(home.readmodel)
    projector.catch_up(open_reader(home))
    now = datetime.now(UTC)
    ((first,),) = projector.con.execute("SELECT min(opened_position) FROM threads").fetchall()
    try:
        for at in (now - timedelta(days=1), now, now + timedelta(days=3), now.replace(tzinfo=None)):
            for limit in (2**62, first):
                for _ in range(2):  # read, then kept
                    kept = live_threads(projector.con, at, limit, projector.kept)
                    assert kept == live_threads(projector.con, at, limit), (at, limit)
    finally:
        projector.close()


def test_a_commitment_closed_elsewhere_leaves_the_next_turns_context(
    served: TurnService, tmp_path: Path
) -> None:
    cid = open_mind(Home(tmp_path)).open_commitment("Water the plants").cid
    assert "Water the plants" in _memory(_turn(served, "Hello"))
    assert "Water the plants" in _memory(_turn(served, "Hello"))  # the kept session's

    _elsewhere(tmp_path, f"app.close_commitment({cid!r}, 'done')")
    after = _turn(served, "Hello")

    assert "Water the plants" not in _memory(after)


def test_every_turns_context_is_the_one_the_statements_give(
    served: TurnService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.projections.retrieval import recall as recall_module
    from mindledger.projections.retrieval import turn_reads

    compared: list[str] = []

    def both(con: Any, *args: Any, **kwargs: Any) -> Any:
        assert kwargs["kept"] is not None  # the kept session's
        kept = recall_module.recall(con, *args, **kwargs)
        sent = recall_module.recall(con, *args, **{**kwargs, "kept": None})
        assert [i.record() for i in kept.items] == [i.record() for i in sent.items]
        assert kept.rendered == sent.rendered
        compared.append(kept.rendered)
        return kept

    monkeypatch.setattr(turn_reads, "recall", both)
    changes = [
        'app.configure("threads.top_k", "2")',
        'app.open_thread("Garden plan", "water the tomatoes")',
        'app.open_commitment("Water the plants")',
        'app.define_concept("garden.plan", "beds by the wall")',
        'app.adopt_name("Nova")',
    ]

    _elsewhere(tmp_path, "\n".join(changes[:2]))
    for message in ("Hello", "What about garden.plan?", "Remember the roof repair"):
        _turn(served, message)
    _elsewhere(tmp_path, "\n".join(changes[2:]))
    for message in ("Hello", "What about garden.plan?", "Remember the roof repair"):
        _turn(served, message)

    assert len(compared) == 6 and "Nova" in compared[-1]
