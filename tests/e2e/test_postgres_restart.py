"""PostgreSQL restarted (stopped at once, every session ended) while two `mind serve`
processes run turns on one PostgreSQL mind: both reconnect and answer turns again, every turn
either server acknowledged is in the ledger exactly once and completed, no turn is recorded
twice, turn numbers stay unique, and the chain verifies from both homes. A turn asked while
PostgreSQL is down is answered 503 (unavailable), never 500 or 400.

The server is a private one (tests/e2e/postgres_instance.py): restarting the suite's shared
server would break the tests running beside this one. MIND_TEST_PG_RESTART_TURNS sets the
acknowledged turns before the restart and again after it, per server (default 2)."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.postgres_instance import private_postgres
from tests.e2e.server_processes import Served, client_env, init_mind, run_mind, serving, verified

TURNS = int(os.environ.get("MIND_TEST_PG_RESTART_TURNS", "2"))
CLIENTS_PER_SERVER = 2
DEADLINE_S = 300


@dataclass
class Load:
    """What the clients sent and got, shared between their threads."""

    acked: dict[str, str] = field(default_factory=dict)  # text -> turn id
    after: Counter[str] = field(
        default_factory=Counter
    )  # acknowledged after the restart, by server
    refused: Counter[str] = field(default_factory=Counter)  # answers other than 200, by status
    said: dict[str, str] = field(default_factory=dict)  # the first message of each status
    restarted: bool = False
    stop: bool = False
    changed: threading.Condition = field(default_factory=threading.Condition)


def client(server: Served, home: Path, name: str, load: Load) -> None:
    k = 0
    while not load.stop:
        k += 1
        text = f"{name} question {k} {uuid.uuid4().hex[:8]}?"
        body = {"text": text, "model": "mock", "mock_reply": f"Answer {k}."}
        try:
            status, made = server.http("POST", server.mind_path(home, "turns"), home, body)
        except (OSError, http.client.HTTPException, ValueError) as e:
            status, made = type(e).__name__, {}
        with load.changed:
            if status == 200 and isinstance(made.get("turn"), str):
                load.acked[text] = made["turn"]
                if load.restarted:
                    load.after[home.name] += 1
            else:
                load.refused[str(status)] += 1
                load.said.setdefault(str(status), str(made.get("error", made))[:300])
            load.changed.notify_all()


def turns_in_ledger(home: Path) -> dict[str, dict[str, Any]]:
    """Every turn the ledger holds: its number, text and events' kinds, in order."""
    ran = run_mind(["log", "--json", "--limit", "100000"], client_env(home, MIND_NO_SERVER="1"))
    assert ran.code == 0, ran.err
    turns: dict[str, dict[str, Any]] = {}
    for event in json.loads(ran.out):
        if event["type"].startswith("mind.turn."):
            turn = turns.setdefault(event["aggregate"], {"kinds": []})
            turn["kinds"].append(event["type"].removeprefix("mind.turn."))
            if event["type"] == "mind.turn.started":
                turn.update(seq=event["payload"]["seq"], text=event["payload"]["text"])
    return turns


@pytest.mark.slow
def test_two_servers_reconnect_after_postgres_restarts_and_lose_or_repeat_no_turn(
    tmp_path: Path,
) -> None:
    import psycopg

    a, b = tmp_path / "a", tmp_path / "b"
    load = Load()
    with private_postgres() as pg:
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA mind")
        init_mind(a, "Echo", "--postgres", pg.dsn, "--schema", "mind")
        b.mkdir()
        shutil.copy(a / "config.json", b / "config.json")  # the same ledger, its own read models
        with serving([a], client_env(a)) as one, serving([b], client_env(b)) as two:
            threads = [
                threading.Thread(target=client, args=(server, home, f"{home.name}{c}", load))
                for server, home in ((one, a), (two, b))
                for c in range(CLIENTS_PER_SERVER)
            ]
            for thread in threads:
                thread.start()
            try:
                with load.changed:
                    before = load.changed.wait_for(lambda: len(load.acked) >= 2 * TURNS, DEADLINE_S)
                pg.restart()
                with load.changed:
                    load.restarted = True
                    back = load.changed.wait_for(
                        lambda: min(load.after["a"], load.after["b"]) >= TURNS, DEADLINE_S
                    )
            finally:
                load.stop = True
                for thread in threads:
                    thread.join(DEADLINE_S)
        turns = turns_in_ledger(a)
        ok = verified(a) and verified(b)

    assert before, "no turns before the restart"
    assert back, f"a server did not answer again after the restart: {load.after}, {load.refused}"
    by_text = Counter(t.get("text") for t in turns.values())
    assert all(by_text[text] == 1 for text in load.acked)  # none lost, none twice
    for text, turn_id in load.acked.items():
        assert (turns[turn_id]["text"], turns[turn_id]["kinds"][-1]) == (text, "completed")
    assert max(by_text.values()) == 1  # no turn recorded twice, acknowledged or not
    seqs = [t["seq"] for t in turns.values()]
    assert len(seqs) == len(set(seqs))
    assert ok
    assert set(load.refused) <= {"503"}, load.said  # the outage said as such, nothing else
    unanswered = Counter(t["kinds"][-1] for t in turns.values() if t["text"] not in load.acked)
    print(
        f"\npostgres restart: {len(load.acked)} acknowledged ({sum(load.after.values())} after "
        f"the restart), refused during it {dict(load.refused)}, recorded but unanswered "
        f"{dict(unanswered)}; {load.said}"
    )
