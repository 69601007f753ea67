"""Build real ledgers for integration tests."""

from __future__ import annotations

from pathlib import Path

from mindledger.compose import Home, open_mind, open_reader
from mindledger.domain.application import Mind


def sqlite_mind(path: Path, commands: int = 8) -> Mind:
    """An initialised SQLite mind at `path` with a mix of events (about 3 per command)."""
    home = Home(path)
    app = open_mind(home, create=True)
    app.init("Echo", open_reader(home).meta()[0])
    for i in range(commands):
        cid = app.open_commitment(f"Promise number {i}").cid
        app.define_concept(f"topic.n{i}", f"Definition {i}")
        if i % 2:
            app.close_commitment(cid, "kept")
    return app
