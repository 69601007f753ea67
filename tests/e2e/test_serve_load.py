"""Concurrent turns and recalls through one real server, on one mind and on two: every turn is
recorded once, with its own turn number, and the ledgers verify (bench/serve_load.py measures
the same at larger numbers)."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.server_processes import (
    Served,
    client_env,
    init_mind,
    ledger_turns,
    serving,
    verified,
)

CLIENTS, TURNS = 4, 5


def work(server: Served, home: Path, client: int) -> list[tuple[int, Any]]:
    """One client: TURNS turns (mock model), each followed by a recall."""
    answers = []
    for i in range(TURNS):
        body = {"text": f"client {client} turn {i}", "model": "mock", "mock_reply": f"ok {i}"}
        answers.append(server.http("POST", server.mind_path(home, "turns"), home, body))
        answers.append(server.http("GET", server.mind_path(home, "recall?q=turn"), home))
    return answers


@pytest.mark.parametrize("minds", [1, 2])
def test_concurrent_clients_lose_no_turn_and_share_no_turn_number(
    tmp_path: Path, minds: int
) -> None:
    homes = [tmp_path / f"m{n}" for n in range(minds)]
    for n, home in enumerate(homes):
        init_mind(home, f"Mind{n}")

    with serving(homes, client_env(homes[0])) as server, ThreadPoolExecutor(CLIENTS) as pool:
        jobs = [pool.submit(work, server, homes[c % minds], c) for c in range(CLIENTS)]
        answers = [a for job in jobs for a in job.result()]

    assert [status for status, _ in answers] == [200] * (2 * CLIENTS * TURNS)
    for n, home in enumerate(homes):
        started, completed = ledger_turns(home)
        sent = {f"client {c} turn {i}" for c in range(n, CLIENTS, minds) for i in range(TURNS)}
        assert Counter(text for _, text in started) == Counter(sent)
        assert len({seq for seq, _ in started}) == len(started) == completed
        assert verified(home)
