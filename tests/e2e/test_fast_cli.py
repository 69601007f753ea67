"""`mind turn` and `mind recall` through the home's running server print what the in-process
commands print; with no server one is started for the next call; `--no-server` and
MIND_NO_SERVER never start one; a stale server.json falls back. Real processes, free ports."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.server_processes import (
    Served,
    cids_named,
    client_env,
    init_mind,
    ledger_turns,
    logged_requests,
    run_in_process,
    run_mind,
    server_info,
    serving,
    stop_pid,
    wait_for,
)

REPLY = "Noted.\nCOMMIT: call mum\nCONCEPT: topic.mum = my mother\nCLOSE: c0000000000"
TURN = ["turn", "remember to call mum", "--model", "mock", "--mock-reply", REPLY]
# What differs between two runs of the same turn on equal ledgers: a fresh id and the time.
VOLATILE = ("turn", "latency_ms")


@pytest.fixture
def twin_homes(tmp_path: Path) -> tuple[Path, Path]:
    """Two homes holding the same ledger (one copied from the other before any server)."""
    served = tmp_path / "a"
    init_mind(served)
    done = run_in_process(  # set-up: the turns under test are the processes below
        ["turn", "first words", "--model", "mock", "--mock-reply", "Hello."],
        client_env(served, MIND_NO_SERVER="1"),
    )
    assert done.code == 0, done.err
    # Recall's vector channel reads what the vector projection has embedded so far, a thread of
    # the server that the plain home has not: off, so both homes recall alike at every moment
    # (tests/service/test_served_vectors.py covers a served mind's vectors).
    off = run_in_process(
        ["config", "set", "embedding.recall", "off"], client_env(served, MIND_NO_SERVER="1")
    )
    assert off.code == 0, off.err
    plain = tmp_path / "b"
    shutil.copytree(served, plain)
    return served, plain


@pytest.fixture
def served(twin_homes: tuple[Path, Path]) -> Iterator[Served]:
    with serving([twin_homes[0]], client_env(twin_homes[0])) as server:
        yield server


def logged_events(home: Path) -> list[dict[str, Any]]:
    done = run_in_process(
        ["log", "--json", "--limit", "1000"], client_env(home, MIND_NO_SERVER="1")
    )
    assert done.code == 0, done.err
    events: list[dict[str, Any]] = done.json()
    return events


def steady(text: str) -> Any:
    data = json.loads(cids_named(text))
    for item in data.get("context") or []:
        item.pop("stream", None)  # a commitment's stream follows its (keyed) CID
    return {k: v for k, v in data.items() if k not in VOLATILE}


def test_a_turn_through_the_server_prints_what_the_in_process_turn_prints(
    twin_homes: tuple[Path, Path], served: Served
) -> None:
    home, plain = twin_homes
    before = logged_requests(home, "POST /v1/minds/Echo/turns 200")

    fast = [run_mind(TURN, client_env(home)), run_mind([*TURN, "--json"], client_env(home))]
    slow = [
        run_mind([*TURN, "--no-server"], client_env(plain)),
        run_mind([*TURN, "--json"], client_env(plain, MIND_NO_SERVER="1")),
    ]
    piped = ["turn", "-", "--model", "mock", "--mock-reply", "Read you."]
    fast.append(run_mind(piped, client_env(home), stdin="from a pipe\r\nsecond line\n"))
    slow.append(
        run_mind(piped, client_env(plain, MIND_NO_SERVER="1"), stdin="from a pipe\r\nsecond line\n")
    )

    assert logged_requests(home, "POST /v1/minds/Echo/turns 200") == before + 3
    assert (fast[2].code, fast[2].out, fast[2].err) == (slow[2].code, slow[2].out, slow[2].err)
    assert ledger_turns(home)[0][-1] == ledger_turns(plain)[0][-1]
    assert (fast[0].code, fast[0].out, cids_named(fast[0].err)) == (
        slow[0].code,
        slow[0].out,
        cids_named(slow[0].err),
    )
    assert "[opened c" in fast[0].err and "[defined concept topic.mum]" in fast[0].err
    assert fast[0].out == "Noted.\n"
    assert (fast[1].code, fast[1].err) == (slow[1].code, slow[1].err) == (0, "")
    assert steady(fast[1].out) == steady(slow[1].out)
    assert fast[1].out.splitlines()[0] == "{" and fast[1].out.endswith("}\n")

    # A system prompt and sampling options ride to the server; a value out of range is the
    # server's 400, so the command runs here and refuses it in its own words.
    chat = ["--system", "Be brief.", "--temperature", "0.2", "--stop", "END", "--stop", "#"]
    sampled = run_mind([*TURN, *chat], client_env(home))
    hot = run_mind([*TURN, "--temperature", "5"], client_env(home))  # refused: run here
    started = [e["payload"] for e in logged_events(home) if e["type"] == "mind.turn.started"]

    assert logged_requests(home, "POST /v1/minds/Echo/turns 200") == before + 4
    assert logged_requests(home, "POST /v1/minds/Echo/turns 400") == 1
    assert (sampled.code, sampled.out) == (0, "Noted.\n")
    assert (started[-1]["system"], started[-1]["sampling"]) == (
        "Be brief.",
        {"temperature": 0.2, "stop": ["END", "#"]},
    )
    assert (hot.code, hot.out, hot.err) == (
        1,
        "",
        "Error: --temperature is 5; it must be from 0 to 2\n",
    )


def test_a_recall_through_the_server_is_byte_identical_to_the_in_process_recall(
    twin_homes: tuple[Path, Path], served: Served
) -> None:
    home, _ = twin_homes
    env = client_env(home)
    before = logged_requests(home, "GET /v1/minds/Echo/recall 200")

    fast = [run_mind(["recall", "mum", *extra], env) for extra in ([], ["--json"])]
    slow = [run_mind(["recall", "mum", "--no-server", *extra], env) for extra in ([], ["--json"])]

    assert logged_requests(home, "GET /v1/minds/Echo/recall 200") == before + 2
    assert [(r.code, r.out, r.err) for r in fast] == [(r.code, r.out, r.err) for r in slow]
    assert fast[1].json()["items"] and "over budget" in fast[0].out


def test_a_failed_turn_exits_1_with_the_same_output_on_both_paths(
    twin_homes: tuple[Path, Path], served: Served
) -> None:
    home, plain = twin_homes
    refused = ["turn", "hello", "--model", "openai/nothing", "--api-base", "http://127.0.0.1:9/v1"]
    before = logged_requests(home, "/turns 503")

    fast = run_mind(refused, client_env(home))
    slow = run_mind(refused, client_env(plain, MIND_NO_SERVER="1"))

    assert logged_requests(home, "/turns 503") == before + 1
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)
    assert fast.code == 1 and fast.err.startswith("Error: generation failed")


def test_a_turn_the_server_refuses_prints_the_in_process_error_and_records_nothing(
    twin_homes: tuple[Path, Path], served: Served
) -> None:
    home, plain = twin_homes
    bad = ["turn", "ring \x1b[2J the bell", "--model", "mock", "--mock-reply", "ok"]
    log_before = run_mind(["log", "--json"], client_env(home, MIND_NO_SERVER="1")).json()

    fast = run_mind(bad, client_env(home))
    slow = run_mind(bad, client_env(plain, MIND_NO_SERVER="1"))

    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)
    assert fast.code == 1 and fast.err.startswith("Error: ")
    assert run_mind(["log", "--json"], client_env(home, MIND_NO_SERVER="1")).json() == log_before


@pytest.fixture
def started_servers(tmp_path: Path) -> Iterator[list[Path]]:
    """Homes whose auto-started servers are stopped afterwards (pids from server.json)."""
    homes: list[Path] = []
    yield homes
    for home in homes:
        info = server_info(home)
        if info is not None and isinstance(info.get("pid"), int) and info["pid"] != os.getpid():
            stop_pid(info["pid"])


def test_a_server_json_whose_pid_now_names_another_process_is_stale(
    tmp_path: Path, started_servers: list[Path]
) -> None:
    home = tmp_path / "m"
    init_mind(home)
    started_servers.append(home)
    # A live pid, but of a process begun after the file's `started`: the server's pid reused.
    reused = {
        "pid": os.getpid(),
        "started": "2020-01-01T00:00:00+00:00",
        "version": "0.1.0",
        "homes": [str(home)],
        "minds": ["Echo"],
    }
    (home / "server.json").write_text(json.dumps(reused), encoding="utf-8")

    first = run_mind(TURN, client_env(home))
    info = wait_for(lambda: (i := server_info(home)) and i["pid"] != os.getpid() and i, "a server")

    assert first.code == 0 and first.out == "Noted.\n"
    assert info["homes"] == [str(home)]


def test_with_a_stale_server_json_a_turn_runs_here_and_starts_a_server_for_the_next_call(
    tmp_path: Path, started_servers: list[Path]
) -> None:
    home = tmp_path / "m"
    init_mind(home)
    started_servers.append(home)
    dead = {"pid": 2**22 + 4321, "version": "0.1.0", "homes": [str(home)], "minds": ["Echo"]}
    (home / "server.json").write_text(json.dumps(dead), encoding="utf-8")
    env = client_env(home)

    first = run_mind(TURN, env)
    info = wait_for(lambda: (i := server_info(home)) and i["pid"] != dead["pid"] and i, "a server")
    second = run_mind(["recall", "mum", "--json"], env)

    assert first.code == 0 and first.out == "Noted.\n"
    assert info["homes"] == [str(home)] and info["idle_exit_s"] == 600
    assert logged_requests(home, "POST /v1/minds/Echo/turns") == 0  # the first ran here
    assert logged_requests(home, "GET /v1/minds/Echo/recall 200") == 1
    assert second.code == 0 and "call mum" in second.out


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_no_server_runs_here_and_starts_nothing(tmp_path: Path, how: str) -> None:
    home = tmp_path / "m"
    init_mind(home)
    env = client_env(home, **({"MIND_NO_SERVER": "1"} if how == "environment" else {}))

    done = run_mind([*TURN, *(["--no-server"] if how == "flag" else [])], env)

    assert done.code == 0 and done.out == "Noted.\n"
    assert not (home / "server.starting").exists()
    assert not (home / "server.json").exists() and not (home / "logs").exists()


def test_a_call_on_a_folder_that_is_no_mind_starts_nothing_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "nothing"
    home.mkdir()

    done = run_mind(["recall", "x"], client_env(home))

    assert done.code == 1 and done.err.startswith("Error: ")
    assert sorted(p.name for p in home.iterdir()) == []


def test_chat_starts_the_homes_server_for_later_calls_unless_told_not_to(
    tmp_path: Path, started_servers: list[Path]
) -> None:
    quiet, home = tmp_path / "quiet", tmp_path / "m"
    for folder in (quiet, home):
        init_mind(folder)
    started_servers.append(home)
    chat = ["chat", "--model", "mock", "--mock-reply", "hi"]

    refused = run_mind([*chat, "--no-server"], client_env(quiet), stdin="/exit\n")
    done = run_mind(chat, client_env(home), stdin="/exit\n")
    info = wait_for(lambda: server_info(home), "the server chat started")

    assert refused.code == 0 and not (quiet / "server.starting").exists()
    assert done.code == 0 and info["homes"] == [str(home)]
