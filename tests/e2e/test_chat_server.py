"""`mind chat` sends plain messages through the home's running server (the reply streamed, the
change lines printed as `mind turn` prints them, the turn recorded once); `--no-server` keeps
it in this process; in-process chat routes through knowledge like `mind turn`. Real
processes, free ports, temp homes."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.server_processes import (
    Served,
    cids_named,
    client_env,
    init_mind,
    ledger_turns,
    logged_requests,
    run_mind,
    serving,
)

REPLY = "Noted.\nCOMMIT: call mum\nCONCEPT: topic.mum = my mother"
CHAT = ["chat", "--model", "mock", "--mock-reply", REPLY]
SAID = "remember to call mum\n/raw\n/exit\n"


@pytest.fixture
def twin_homes(tmp_path: Path) -> tuple[Path, Path]:
    """Two homes holding the same new mind (copied before any server ran)."""
    served = tmp_path / "a"
    init_mind(served)
    plain = tmp_path / "b"
    shutil.copytree(served, plain)
    return served, plain


@pytest.fixture
def served(twin_homes: tuple[Path, Path]) -> Iterator[Served]:
    with serving([twin_homes[0]], client_env(twin_homes[0])) as server:
        yield server


def test_chat_through_the_server_prints_the_reply_and_changes_and_records_the_turn_once(
    twin_homes: tuple[Path, Path], served: Served
) -> None:
    home, plain = twin_homes
    before = logged_requests(home, "POST /v1/minds/Echo/turns 200")

    fast = run_mind(CHAT, client_env(home), stdin=SAID)
    slow = run_mind(CHAT, client_env(plain, MIND_NO_SERVER="1"), stdin=SAID)

    assert logged_requests(home, "POST /v1/minds/Echo/turns 200") == before + 1
    assert ledger_turns(home) == ([(1, "remember to call mum")], 1)
    # Each mind keys its CIDs with its own secret: the twins' CIDs differ, nothing else.
    assert (fast.code, fast.out, cids_named(fast.err)) == (
        slow.code,
        slow.out,
        cids_named(slow.err),
    )
    assert "Echo> Noted.\n" in fast.out and "COMMIT: call mum" in fast.out  # /raw read it
    assert "[opened c" in fast.err and "[defined concept topic.mum]" in fast.err


def test_chat_with_no_server_never_contacts_the_running_server(
    twin_homes: tuple[Path, Path], served: Served
) -> None:
    home, _ = twin_homes
    before = logged_requests(home, "/v1/")

    done = run_mind([*CHAT, "--no-server"], client_env(home), stdin=SAID)

    assert done.code == 0 and "Echo> Noted.\n" in done.out
    assert logged_requests(home, "/v1/") == before
    assert ledger_turns(home) == ([(1, "remember to call mum")], 1)


def test_chat_answers_from_verified_knowledge_without_the_model(tmp_path: Path) -> None:
    home = tmp_path / "m"
    init_mind(home)
    env = client_env(home, MIND_NO_SERVER="1")
    kept = ["remember", "Paris", "--question", "capital of France"]
    assert run_mind([*kept, "--state", "verified", "--confidence", "0.95"], env).code == 0

    done = run_mind(["chat", "--model", "mock"], env, stdin="capital of France\n")

    assert done.code == 0 and "Echo> Paris\n" in done.out, done.err
    assert ledger_turns(home) == ([(1, "capital of France")], 1)


def test_a_failed_turn_in_chat_prints_the_same_on_both_paths_and_is_recorded_once(
    twin_homes: tuple[Path, Path], served: Served
) -> None:
    home, plain = twin_homes
    refused = ["chat", "--model", "openai/nothing", "--api-base", "http://127.0.0.1:9/v1"]
    before = logged_requests(home, "POST /v1/minds/Echo/turns 200")

    fast = run_mind(refused, client_env(home), stdin="hello\n")
    slow = run_mind(refused, client_env(plain, MIND_NO_SERVER="1"), stdin="hello\n")

    assert logged_requests(home, "POST /v1/minds/Echo/turns 200") == before + 1
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)
    assert "[generation failed (" in fast.err
    assert ledger_turns(home) == ([(1, "hello")], 0)
