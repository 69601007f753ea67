"""The guarded mind keeps the library name of the mind it guards: eventsourcing names tables
and settings after it, and a PostgreSQL mind's events live in `mind_events`."""

from __future__ import annotations

from mindledger.append_guard import GuardedMind
from mindledger.domain.application import Mind


def test_the_guarded_mind_keeps_the_minds_name_for_its_tables() -> None:
    assert GuardedMind.name == Mind.name == "mind"
