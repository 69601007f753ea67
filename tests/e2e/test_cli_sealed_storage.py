"""Sealed storage through the `mind` command: text is never in the ledger or the key store in
the clear, and MIND_MASTER_KEY locks the key store."""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]
MASTER = base64.b64encode(b"m" * 32).decode()
OTHER = base64.b64encode(b"o" * 32).decode()


def files_holding(home: Path, needle: bytes, names: tuple[str, ...]) -> list[str]:
    found = []
    for path in home.rglob("*"):
        if path.is_file() and path.name.startswith(names) and needle in path.read_bytes():
            found.append(path.name)
    return found


def test_a_commitment_and_a_turn_are_stored_only_as_ciphertext(cli: Cli, mind_home: Path) -> None:
    cli("commit", "Water the ferns on Tuesday")
    cli("turn", "Lilac perfume?", "--model", "mock", "--mock-reply", "Cedar smoke!", "--no-server")

    shown = cli("log", "--json").json()

    texts = {e["payload"].get("text") or e["payload"].get("reply") for e in shown}
    assert {"Water the ferns on Tuesday", "Lilac perfume?", "Cedar smoke!"} <= texts
    for word in (b"ferns", b"Lilac", b"Cedar"):
        assert files_holding(mind_home, word, ("ledger.sqlite", "keys.sqlite")) == []


def test_the_master_key_wraps_the_keys_and_is_needed_to_read_them(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_MASTER_KEY", MASTER)
    cli("init", "--name", "Echo")
    cli("commit", "Water the ferns on Tuesday")
    con = sqlite3.connect(home / "keys.sqlite")
    stored = [bytes(k) for (k,) in con.execute("SELECT key FROM keys")]
    con.close()

    listed = cli("commitments", "--json").json()
    # The ledger's own words (the read models are derived copies in the clear, like any cache).
    monkeypatch.delenv("MIND_MASTER_KEY")
    without = cli("log")
    monkeypatch.setenv("MIND_MASTER_KEY", OTHER)
    wrong = cli("log")

    assert [c["text"] for c in listed] == ["Water the ferns on Tuesday"]
    assert stored and all(len(k) == 12 + 32 + 16 for k in stored)  # nonce, key, tag: wrapped
    for result, says in ((without, "set MIND_MASTER_KEY"), (wrong, "not the key")):
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 1 and len(lines) == 1 and says in lines[0], result.stderr
        assert MASTER not in result.stderr and OTHER not in result.stderr


def test_a_bad_master_key_is_one_line_that_does_not_echo_it(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_MASTER_KEY", "hunter2-is-my-key")

    result = cli("status")

    assert result.exit_code == 1
    assert "MIND_MASTER_KEY" in result.stderr and "hunter2" not in result.stderr


def test_a_relation_s_name_and_a_resolved_thread_s_artifact_are_sealed_and_forgettable(
    cli: Cli, mind_home: Path
) -> None:
    cli("concept", "define", "garden.plan", "What to plant where")
    cli("concept", "define", "garden.shed", "Where the tools live")
    assert (
        cli("concept", "relate", "garden.plan", "garden.shed", "--as", "zqxrelated").exit_code == 0
    )
    thread = cli("thread", "open", "Which seeds?", "--content", "Ask at the market", "--json")
    tid = thread.json()["id"]
    done = cli("thread", "resolve", tid, "--as", "answered", "--artifact", "notes/zqxartifact.md")
    assert done.exit_code == 0, done.stderr
    assert "zqxrelated" in cli("query", "SELECT relation FROM concept_relations").output
    assert "zqxartifact" in cli("query", "SELECT artifact FROM threads").output
    for word in (b"zqxrelated", b"zqxartifact"):
        assert files_holding(mind_home, word, ("ledger.sqlite", "keys.sqlite")) == []

    cli("forget", "--concept", "garden.plan", "--yes")
    cli("forget", "--thread", tid, "--yes")

    for word in (b"zqxrelated", b"zqxartifact"):
        assert files_holding(mind_home, word, ("",)) == []
    assert cli("verify").exit_code == 0
