"""Keys made ahead of use: stored once per batch, each before any event it seals, so a writer
killed mid-stream leaves spare keys at most, never an event nobody can open."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from mindledger.adapters.key_store import KeyStore, MemoryKeyStore
from mindledger.adapters.sealing import key_ids
from mindledger.compose import Home, open_mind
from tests.conftest import subprocess_env
from tests.integration.ledger_factory import sqlite_mind

REPO = Path(__file__).resolve().parents[2]
WRITER = [sys.executable, "-m", "tests.integration.writer"]


class CountingStore(MemoryKeyStore):
    """A key store that makes keys ahead as the durable ones do, and notes each store."""

    AHEAD = KeyStore.AHEAD

    def __init__(self) -> None:
        super().__init__()
        self.stores: list[int] = []

    def _store(self, keys: Mapping[bytes, bytes]) -> None:
        self.stores.append(len(keys))
        super()._store(keys)


def test_a_run_of_appends_stores_keys_once_per_batch_and_each_before_its_event() -> None:
    store = CountingStore()

    for _ in range(500):
        key_id, key = store.new_key()
        store.flush()  # what the recorder does before it appends the event
        assert store.keys[key_id] == key

    assert sum(store.stores) >= 500
    assert len(store.stores) <= 7 + 500 // KeyStore.AHEAD  # 1, 2, 4, ... 64, then 64 each


def test_a_writer_killed_mid_stream_leaves_every_event_openable(tmp_path: Path) -> None:
    sqlite_mind(tmp_path, commands=0)
    writer = subprocess.Popen(
        [*WRITER, str(tmp_path), "crash", "100000"],
        cwd=REPO,
        env=subprocess_env(tmp_path),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    acked = [writer.stdout.readline().strip() for _ in range(100)]

    writer.send_signal(signal.SIGKILL)
    rest, _ = writer.communicate(timeout=60)
    acked += rest.split()

    assert writer.returncode == -signal.SIGKILL
    ledger = sqlite3.connect(tmp_path / "ledger.sqlite")
    named = {
        key_id
        for topic, state in ledger.execute("SELECT topic, state FROM stored_events")
        for key_id in key_ids(topic, json.loads(state)).values()
    }
    stored = {
        row[0] for row in sqlite3.connect(tmp_path / "keys.sqlite").execute("SELECT id FROM keys")
    }
    assert len(named) >= len(acked) and named <= stored  # no event names a key that is not there
    assert len(stored - named) <= 2 * KeyStore.AHEAD  # spares: the two processes' last batches
    app = open_mind(Home(tmp_path))
    assert all(app.commitment(cid).text.startswith("crash promise") for cid in acked)
