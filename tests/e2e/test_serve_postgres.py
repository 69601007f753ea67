"""Two `mind serve` processes, each with its own home and read models, serving one mind whose
ledger is one PostgreSQL schema: concurrent turns through both make no fork and share no turn
number, and each server reads its own writes."""

from __future__ import annotations

import shutil
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.e2e.server_processes import (
    Served,
    client_env,
    init_mind,
    ledger_turns,
    serving,
    verified,
)
from tests.integration.backends import POSTGRES_DSN, needs_postgres, postgres_schema

TURNS = 3


def turns(server: Served, home: Path, client: str) -> list[int]:
    statuses = []
    for i in range(TURNS):
        body = {"text": f"{client} turn {i}", "model": "mock", "mock_reply": f"ok {i}"}
        statuses.append(server.http("POST", server.mind_path(home, "turns"), home, body)[0])
    return statuses


@pytest.mark.postgres
@needs_postgres
def test_two_servers_on_one_postgres_ledger_make_no_fork_and_read_their_own_writes(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    with postgres_schema() as schema:
        init_mind(a, "Echo", "--postgres", POSTGRES_DSN, "--schema", schema)
        b.mkdir()
        shutil.copy(a / "config.json", b / "config.json")  # the same ledger, its own read models

        with serving([a], client_env(a)) as one, serving([b], client_env(b)) as two:
            with ThreadPoolExecutor(4) as pool:
                jobs = [
                    pool.submit(turns, server, home, f"{name}{c}")
                    for server, home, name in ((one, a, "a"), (two, b, "b"))
                    for c in range(2)
                ]
                statuses = [s for job in jobs for s in job.result()]
            own = []
            for server, home, word in ((one, a, "zebra"), (two, b, "walrus")):
                body = {"text": f"the {word} left at noon", "model": "mock", "mock_reply": "ok"}
                said = server.http("POST", server.mind_path(home, "turns"), home, body)
                found = server.http("GET", server.mind_path(home, f"recall?q={word}"), home)
                own.append((said[0], found[0], [i["text"] for i in found[1]["items"]]))

        started, completed = ledger_turns(a)
        ok = verified(a) and verified(b)

    assert statuses == [200] * (4 * TURNS)
    sent = [f"{n}{c} turn {i}" for n in "ab" for c in range(2) for i in range(TURNS)]
    sent += ["the zebra left at noon", "the walrus left at noon"]
    assert Counter(text for _, text in started) == Counter(sent)
    assert len({seq for seq, _ in started}) == len(started) == completed
    assert ok
    for (said_status, found_status, texts), word in zip(own, ("zebra", "walrus"), strict=True):
        assert (said_status, found_status) == (200, 200)
        assert any(f"the {word} left at noon" in text for text in texts)
