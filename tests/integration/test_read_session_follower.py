"""A read session beside a running follower (another holder of the projector lock) reads the
copy the follower publishes after a write, not the copy it opened before: a follower publishes
by replacing the file, and an open connection keeps reading the file it opened."""

from __future__ import annotations

from pathlib import Path

from mindledger.compose import Home, open_reader, read_model_paths
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.readmodel import ReadSession, ensure_fresh, projector_lock
from tests.integration.ledger_factory import sqlite_mind


def follower_publishes(home: Home) -> None:
    """What a follower does after a write: catch its working file up and publish a copy."""
    paths, reader = read_model_paths(home), open_reader(home)
    projector = Projector(paths.working)
    try:
        projector.catch_up(reader)
        projector.publish(paths.published)
    finally:
        projector.close()
        reader.close()


def test_a_refreshed_session_reads_the_write_a_follower_published_since_it_opened(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path / "mind")
    app = sqlite_mind(home.path, commands=2)
    paths, reader = read_model_paths(home), open_reader(home)
    ensure_fresh(paths, reader)
    with projector_lock(paths.lock, wait=False) as held:  # the follower, holding the lock
        assert held
        session = ReadSession(paths, reader)
        try:
            con = session.open()  # the published copy as it stands
            opened_at = session.position()
            cid = app.open_commitment("Water the ferns on Friday").cid
            follower_publishes(home)

            con = session.refresh()

            found = con.execute("SELECT text FROM commitments WHERE cid = ?", [cid]).fetchall()
            assert session.position() == reader.head()[0] > opened_at
            assert found == [("Water the ferns on Friday",)]
        finally:
            session.close()
            reader.close()
            app.close()
