"""One contract, every backend: the same cases run on SQLite and on PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mindledger.adapters.hash_chain import VerifyResult
from mindledger.adapters.verification import verify_ledger
from mindledger.compose import Home, open_mind, open_reader, read_model
from mindledger.domain.application import Mind
from mindledger.domain.errors import CommitmentAlreadyClosedError
from mindledger.projections.queries import listings as queries
from tests.conftest import REPO, sealed_text_changed, subprocess_env
from tests.integration.backends import BACKENDS, backend_home


@pytest.fixture(params=BACKENDS)
def home(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Home]:
    monkeypatch.delenv("MIND_BACKEND", raising=False)
    monkeypatch.delenv("MIND_NOW", raising=False)
    with backend_home(request.param, tmp_path / "mind") as h:
        app = open_mind(h, create=True)
        app.init("Echo", open_reader(h).meta()[0])
        yield h


def verify(home: Home) -> VerifyResult:
    reader = open_reader(home)
    return verify_ledger(reader, batch=4)


def test_commands_are_recorded_in_a_verifiable_chain(home: Home) -> None:
    app = open_mind(home)
    cid = app.open_commitment("Send the weekly report").cid
    app.close_commitment(cid, "sent")
    app.define_concept("project.alpha", "The billing rewrite")

    result = verify(home)

    assert (result.ok, result.events) == (True, 4)
    assert result.head_hash == open_reader(home).head()[1]


def test_two_minds_never_share_a_genesis(home: Home, tmp_path: Path) -> None:
    other = Home(tmp_path / "other")
    open_mind(other, create=True)

    assert open_reader(home).meta()[2] != open_reader(other).meta()[2]


def test_a_rejected_command_appends_nothing(home: Home) -> None:
    app: Mind = open_mind(home)
    cid = app.open_commitment("Call the bank").cid
    app.close_commitment(cid)

    with pytest.raises(CommitmentAlreadyClosedError):
        app.close_commitment(cid)

    assert open_reader(home).head()[0] == 3


def test_listings_read_the_projection_of_this_backend(home: Home) -> None:
    open_mind(home).open_commitment("Water the plants")

    with read_model(home) as con:
        rows = queries.commitments(con, include_closed=True)

    assert [r["text"] for r in rows] == ["Water the plants"]


def test_tampering_with_a_payload_is_found(home: Home) -> None:
    open_mind(home).open_commitment("one")
    open_mind(home).open_commitment("two")
    # "one", sealed, edited in the stored event at position 2.
    if home.backend() == "sqlite":
        import sqlite3

        con = sqlite3.connect(home.ledger)
        (state,) = con.execute("SELECT state FROM stored_events WHERE rowid = 2").fetchone()
        con.execute(
            "UPDATE stored_events SET state = ? WHERE rowid = 2", (sealed_text_changed(state),)
        )
        con.commit()
        con.close()
    else:
        reader = open_reader(home)
        at_two = (
            f'WHERE notification_id = (SELECT notification_id FROM "{reader.schema}".'
            "ledger_chain WHERE position = 2)"
        )
        events = f'"{reader.schema}".mind_events'
        (state,) = reader.conn.execute(f"SELECT state FROM {events} {at_two}").fetchone()
        reader.conn.execute(
            f"UPDATE {events} SET state = %s {at_two}", (sealed_text_changed(bytes(state)),)
        )

    result = verify(home)

    assert (result.ok, result.first_bad, result.reason) == (False, 2, "payload changed")


def test_concurrent_writer_processes_do_not_fork_the_chain(home: Home) -> None:
    env = subprocess_env(home.path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.integration.writer", str(home.path), tag, "150"],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        for tag in ("left", "right")
    ]
    acked = [cid for p in procs for cid in p.communicate(timeout=300)[0].split()]

    assert [p.returncode for p in procs] == [0, 0]
    assert len(set(acked)) == 300
    assert (verify(home).ok, verify(home).events) == (True, 301)


def test_a_follower_process_publishes_new_events(home: Home) -> None:
    import signal
    import time

    from mindledger.projections.engine.readmodel import published_position

    follower = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from mindledger.cli.main import main; main()",
            "project",
            "--follow",
        ],
        env=subprocess_env(home.path),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        open_mind(home).open_commitment("Noticed by the follower")
        head = open_reader(home).head()[0]
        deadline = time.monotonic() + 60
        while published_position(home.published) < head:
            assert time.monotonic() < deadline, follower.stderr
            time.sleep(0.05)
    finally:
        follower.send_signal(signal.SIGTERM)
        follower.communicate(timeout=30)

    assert follower.returncode == 0
