"""`mind serve` SIGKILLed while 8 clients run turns (`--model mock`): every turn the server
acknowledged (200 with its id) is in the ledger exactly once and completed; a turn in flight is
absent, or recorded once and then either completed (the reply was lost with the process) or
marked interrupted by the next turn; the chain verifies; a restarted `mind serve` takes its
first request. So that the kill surely lands inside a turn, one more turn waits on a held model
(a loopback provider that answers only when released) when the server is killed.

MIND_TEST_KILL_TURNS sets how many acknowledged turns come before the kill (default 8)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.service.serving import Server, init_home, run_mind, start_server
from tests.service.stub_provider import held_provider

CLIENTS = 8
KILL_AFTER = int(os.environ.get("MIND_TEST_KILL_TURNS", "8"))
DEADLINE_S = 300
M = "/v1/minds/Echo"
HELD = "A question whose model never answers?"
# LiteLLM wants a key for an openai/ model; the held provider ignores it.
PROVIDER_ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key"}


@dataclass
class Load:
    """What the clients sent and what the server acknowledged, shared between their threads."""

    acked: dict[str, str] = field(default_factory=dict)  # text -> turn id
    sent: list[str] = field(default_factory=list)
    odd: list[str] = field(default_factory=list)  # an answer that was neither 200 nor a drop
    changed: threading.Condition = field(default_factory=threading.Condition)


def client(server: Server, load: Load, number: int) -> None:
    """Turns one after another until the server is gone."""
    for k in range(10_000):
        text = f"Client {number} question {k} {uuid.uuid4().hex[:8]}?"
        with load.changed:
            load.sent.append(text)
        body = {"text": text, "model": "mock", "mock_reply": f"Answer {k}."}
        try:
            reply = server.request("POST", f"{M}/turns", body)
        except (OSError, http.client.HTTPException):
            return  # killed: this turn was not acknowledged
        with load.changed:
            made = reply.json() if reply.status == 200 else {}
            if isinstance(made.get("turn"), str):
                load.acked[text] = made["turn"]
            else:
                load.odd.append(f"{reply.status} {reply.body[:200]!r}")
            load.changed.notify_all()
        if reply.status != 200:
            return


def held_turn(server: Server, body: dict[str, str]) -> None:
    with contextlib.suppress(OSError, http.client.HTTPException):
        server.request("POST", f"{M}/turns", body)


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    return init_home(tmp_path / "echo", "Echo")


@pytest.fixture()
def restarted() -> Iterator[list[Server]]:
    servers: list[Server] = []
    yield servers
    for server in servers:
        server.kill()


def turns_in_ledger(home: Path) -> dict[str, dict[str, Any]]:
    """Every turn the ledger holds: its text, its events' kinds, in order."""
    ran = run_mind(home, "log", "--json", "--limit", "100000")
    assert ran.returncode == 0, ran.stderr
    turns: dict[str, dict[str, Any]] = {}
    for event in json.loads(ran.stdout):
        kind = event["type"]
        if kind.startswith("mind.turn."):
            turn = turns.setdefault(event["aggregate"], {"text": None, "kinds": []})
            turn["kinds"].append(kind.removeprefix("mind.turn."))
            if kind == "mind.turn.started":
                turn["text"] = event["payload"]["text"]
    return turns


def test_every_acknowledged_turn_survives_a_sigkill_once_and_a_restart_serves_at_once(
    home: Path, restarted: list[Server]
) -> None:
    load = Load()
    server = start_server([home], **PROVIDER_ENV)
    threads = [
        threading.Thread(target=client, args=(server, load, n), daemon=True) for n in range(CLIENTS)
    ]
    try:
        with held_provider("Never sent.") as gate:
            for thread in threads:
                thread.start()
            with load.changed:
                enough = load.changed.wait_for(
                    lambda: len(load.acked) >= KILL_AFTER or load.odd, DEADLINE_S
                )
            held = {"text": HELD, "model": "openai/stub", "api_base": gate.url}
            holder = threading.Thread(target=held_turn, args=(server, held), daemon=True)
            holder.start()
            in_turn = gate.received.wait(DEADLINE_S)  # the held turn is started, its model asked
            server.process.send_signal(signal.SIGKILL)
            server.process.wait(timeout=60)
            for thread in [*threads, holder]:
                thread.join(DEADLINE_S)
    finally:
        server.kill()
    assert enough and in_turn and not load.odd, load.odd
    assert not any(thread.is_alive() for thread in threads)

    verify_after_kill = run_mind(home, "verify", "--json")
    again = start_server([home])
    restarted.append(again)
    first = again.request(
        "POST", f"{M}/turns", {"text": "After the crash?", "model": "mock", "mock_reply": "Here."}
    )
    turns = turns_in_ledger(home)

    assert verify_after_kill.returncode == 0 and json.loads(verify_after_kill.stdout)["ok"]
    assert first.status == 200, first.body
    by_text = Counter(t["text"] for t in turns.values())
    assert all(by_text[text] == 1 for text in load.acked)  # recorded once
    for text, turn_id in load.acked.items():
        assert turns[turn_id]["text"] == text
        assert turns[turn_id]["kinds"][-1] == "completed", turns[turn_id]
    unacked = [t for t in load.sent if t not in load.acked]
    assert all(by_text[text] <= 1 for text in unacked)
    assert set(by_text) <= {*load.sent, HELD, "After the crash?"}  # nothing unasked
    assert by_text[HELD] == 1
    held_turn_kinds = next(t["kinds"] for t in turns.values() if t["text"] == HELD)
    assert held_turn_kinds == ["started", "interrupted"]  # marked by the restarted server's turn
    outcomes = Counter(
        t["kinds"][-1] for t in turns.values() if t["text"] in unacked
    )  # in flight at the kill: completed (reply lost) or interrupted, never left started
    assert set(outcomes) <= {"completed", "interrupted"}, outcomes
    assert json.loads(run_mind(home, "verify", "--json").stdout)["ok"] is True
    print(
        f"\nkill under load: {len(load.acked)} acknowledged, {len(unacked)} mock turns in flight "
        f"({outcomes['interrupted']} interrupted, {outcomes['completed']} completed unanswered, "
        f"{len(unacked) - sum(outcomes.values())} absent), the held turn interrupted"
    )
