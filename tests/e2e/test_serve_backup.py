"""`mind backup` of a home that a real `mind serve` keeps writing turns to: the copy is the mind
at one instant, verifies, and opens as a working mind."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mindledger.backup import backup_home
from mindledger.cli.main import mind
from mindledger.compose import Home
from tests.e2e.server_processes import READY_S, Served, client_env, init_mind, serving


def _turns(server: Served, home: Path, done: queue.Queue[int], stop: threading.Event) -> None:
    i = 0
    while not stop.is_set():
        body = {"text": f"served turn {i}", "model": "mock", "mock_reply": f"ok {i}"}
        status, _ = server.http("POST", server.mind_path(home, "turns"), home, body)
        done.put(status)
        i += 1


def _drain(answers: queue.Queue[Any]) -> None:
    """Drop the answers already in (turns done before now)."""
    while True:
        try:
            answers.get_nowait()
        except queue.Empty:
            return


@contextmanager
def _bar(on_update: Any) -> Iterator[Any]:
    class Bar:
        def update(self, n: int) -> None:
            on_update(n)

    yield Bar()


def _cli(home: Path, *args: str) -> Any:
    result = CliRunner().invoke(mind, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_backup_while_mind_serve_records_turns_verifies_and_opens(tmp_path: Path) -> None:
    home, dest = tmp_path / "mind", tmp_path / "backup"
    init_mind(home)
    answered: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    during: list[int] = []

    def a_turn_lands_mid_backup(_: int) -> None:
        if not during:  # answered after the ledger's snapshot, before the keys are copied
            _drain(answered)
            during.append(answered.get(timeout=READY_S))

    with serving([home], client_env(home)) as server:
        client = threading.Thread(target=_turns, args=(server, home, answered, stop))
        client.start()
        try:
            assert answered.get(timeout=READY_S) == 200
            done = backup_home(Home(home), dest, lambda n, label: _bar(a_turn_lands_mid_backup))
        finally:
            stop.set()
            client.join(timeout=READY_S)

    assert during == [200] and done["verified"]
    assert done["events"] < _cli(home, "verify", "--json")["events"]
    assert _cli(dest, "verify", "--json")["ok"]
    assert any(
        "served turn" in item["text"]
        for item in _cli(dest, "recall", "served turn", "--json")["items"]
    )
    turn = _cli(dest, "turn", "Still here?", "--model", "mock", "--mock-reply", "Yes.", "--json")
    assert turn["reply"] == "Yes." and _cli(dest, "verify", "--json")["ok"]
