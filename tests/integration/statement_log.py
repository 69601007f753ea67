"""The DuckDB statements a read session sends, recorded (for counts and kinds, never timing)."""

from __future__ import annotations

from typing import Any

import pytest

from mindledger.projections.engine import projector as projector_module
from mindledger.projections.retrieval import concurrent_reads


class Sent:
    """A connection that records the SQL of every call it is sent."""

    def __init__(self, con: Any, calls: list[str]) -> None:
        self.con, self.calls = con, calls

    def execute(self, sql: str, *params: Any) -> Any:
        self.calls.append(sql)
        return self.con.execute(sql, *params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


def log_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, every statement sent through a projector's connection (a kept session's)
    and the sibling connections its reads run on, appended to the list returned."""
    log: list[str] = []
    connect, close, sibling = (
        projector_module.connect,
        projector_module.close,
        concurrent_reads.sibling,
    )
    monkeypatch.setattr(projector_module, "connect", lambda *a, **k: Sent(connect(*a, **k), log))
    monkeypatch.setattr(projector_module, "close", lambda c, **k: close(c.con, **k))
    monkeypatch.setattr(concurrent_reads, "sibling", lambda c: Sent(sibling(c.con), log))
    return log
