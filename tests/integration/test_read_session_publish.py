"""A reader of another process is not starved by a read session that holds the projector lock.

A session holding the lock catches its working file up and reads that; it never published, so
a reader of another process, which cannot take the lock, waited for a published copy nobody
made and failed with `ProjectorBehindError` although nothing was wrong (two processes reading
one home, one of them in a loop). Here the holder never lets the lock go while the other
process reads: the race is certain, not a matter of timing."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mindledger.compose import Home, open_reader, read_model_paths
from mindledger.projections.engine import readmodel
from mindledger.projections.engine.readmodel import ReadSession, published_position
from tests.integration.ledger_factory import sqlite_mind

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 120.0  # generous: a loaded machine; the reader's own wait is shorter

# The other process: opens the read model as `mind recall` does and says what it read.
READER = """
import json, sys
import pytest

from mindledger.compose import Home, open_reader, read_model_paths
from mindledger.projections.engine import readmodel
from mindledger.projections.engine.readmodel import open_read_model
from pathlib import Path
home = Home(Path(sys.argv[1]))
reader = open_reader(home)
head = reader.head()[0]
with open_read_model(read_model_paths(home), reader, timeout=float(sys.argv[2])) as con:
    seen = con.execute("SELECT max(position) FROM tracking").fetchone()[0]
    texts = [r[0] for r in con.execute("SELECT text FROM commitments").fetchall()]
reader.close()
print(json.dumps({"head": head, "seen": seen, "texts": texts}))
"""


def _other_reader(home: Home, timeout: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [sys.executable, "-c", READER, str(home.path), str(timeout)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _read_until_done(session: ReadSession, proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Keep reading through `session` (never letting the lock go) until `proc` ends."""
    deadline = time.monotonic() + DEADLINE_S
    while proc.poll() is None:
        assert time.monotonic() < deadline, "the other reader never finished"
        session.refresh()  # one read of a loop, as a recall loop or a served mind makes
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)
    return proc.communicate()


def test_a_reader_of_another_process_reads_while_a_session_holds_the_lock(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path / "mind")
    app = sqlite_mind(home.path, commands=3)
    paths, reader = read_model_paths(home), open_reader(home)
    try:
        session = ReadSession(paths, reader)
        try:
            session.open()
            assert session.projector is not None, "the session holds the projector lock"
            session.refresh()
            # The ledger moves while the session is held: a write nobody published.
            app.open_commitment("Water the ferns on Friday")
            head = reader.head()[0]
            assert published_position(paths.published) < head

            out, err = _read_until_done(session, _other_reader(home, timeout=30.0))

            assert session.projector is not None, "the lock was held throughout"
        finally:
            session.close()
    finally:
        reader.close()
        app.close()
    assert out, err
    seen = json.loads(out)
    assert seen["head"] >= head, err
    assert seen["seen"] >= seen["head"]  # read-your-writes: every event up to its start
    assert "Water the ferns on Friday" in seen["texts"]


def test_a_session_that_lets_go_publishes_for_a_reader_that_asked(tmp_path: Path) -> None:
    home = Home(tmp_path / "mind")
    app = sqlite_mind(home.path, commands=2)
    paths, reader = read_model_paths(home), open_reader(home)
    try:
        app.open_commitment("Oil the gate")
        with ReadSession(paths, reader) as session:
            assert session.projector is not None
            paths.lock.write_bytes(b"1")  # what a waiting reader of another process writes
        assert published_position(paths.published) == reader.head()[0]
        assert paths.lock.stat().st_size == 0  # answered: the next holder publishes no more

        with ReadSession(paths, reader):
            pass
        assert published_position(paths.published) == reader.head()[0]
    finally:
        reader.close()
        app.close()


def test_a_session_kept_between_turns_publishes_for_a_reader_that_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kept until asked for (no clock in the test): a served mind's session between turns.
    monkeypatch.setattr(readmodel, "LINGER_S", 3600.0)
    home = Home(tmp_path / "mind")
    app = sqlite_mind(home.path, commands=2)
    paths, reader = read_model_paths(home), open_reader(home)
    owner = object()
    try:
        app.open_commitment("Oil the gate")
        session = ReadSession(paths, reader)
        session.refresh()
        assert session.projector is not None
        paths.lock.write_bytes(b"1")  # what a waiting reader of another process writes

        session.linger(owner)  # the lock is kept, and what it applied is published

        assert readmodel.take_lingering(paths, owner) is session
        assert session.projector is not None
        assert published_position(paths.published) == reader.head()[0]
        session.close()
    finally:
        readmodel.release_lingering(paths.lock)
        reader.close()
        app.close()
