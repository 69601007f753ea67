"""`mind serve` over its life: concurrent turns, a client gone mid-turn, SIGTERM mid-turn,
`mind server status|stop`, idle exit, and the refusals before it starts."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.fake_provider import failing_provider
from tests.service.serving import Reply, Server, init_home, run_mind, sse_events, start_server
from tests.service.stub_provider import held_provider

# LiteLLM wants a key for an openai/ model; the stub provider ignores it.
PROVIDER_ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = init_home(tmp_path_factory.mktemp("life") / "echo", "Echo")
    running = start_server([home], **PROVIDER_ENV)
    try:
        yield running
    finally:
        running.kill()


def mock_turn(server: Server, text: str) -> Reply:
    body = {"text": text, "model": "mock", "mock_reply": f"Reply to {text}."}
    return server.request("POST", "/v1/minds/Echo/turns", body)


def turns(home: Path) -> list[dict[str, Any]]:
    result = run_mind(home, "query", "SELECT seq, status FROM turns ORDER BY seq")
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def verified(home: Path) -> bool:
    result = run_mind(home, "verify", "--json")
    return result.returncode == 0 and bool(json.loads(result.stdout)["ok"])


def test_concurrent_turns_on_one_mind_are_each_recorded_once_with_their_own_number(
    server: Server,
) -> None:
    home = server.homes[0]
    before = len(turns(home))
    answers: list[Reply] = []
    reads: list[Reply] = []
    outside: list[Any] = []
    threads = [
        threading.Thread(target=lambda i=i: answers.append(mock_turn(server, f"turn {i}")))
        for i in range(6)
    ] + [
        threading.Thread(
            target=lambda: reads.append(server.request("GET", "/v1/minds/Echo/recall?q=turn"))
        )
        for _ in range(4)
    ]
    # Another process writes the same ledger meanwhile: a turn through the command line.
    cli_turn = threading.Thread(
        target=lambda: outside.append(
            run_mind(
                home, "turn", "from outside", "--model", "mock", "--mock-reply", "ok", "--json"
            )
        )
    )

    cli_turn.start()
    for t in threads:
        t.start()
    for t in [*threads, cli_turn]:
        t.join(300)

    assert sorted(a.status for a in answers) == [200] * 6
    assert [r.status for r in reads] == [200] * 4
    assert outside[0].returncode == 0, outside[0].stderr
    seqs = [a.json()["seq"] for a in answers] + [json.loads(outside[0].stdout)["seq"]]
    assert sorted(seqs) == list(range(before + 1, before + 8))
    recorded = turns(home)
    assert [t["seq"] for t in recorded] == list(range(1, before + 8))
    assert {t["status"] for t in recorded} == {"complete"}
    assert verified(home)


def test_a_client_that_disconnects_mid_turn_leaves_the_turn_recorded_whole(
    server: Server,
) -> None:
    with held_provider("Done.\nCOMMIT: water the plants") as gate:
        con = server.connection()
        body = {"text": "a slow one", "model": "openai/stub", "api_base": gate.url}
        con.request(
            "POST",
            "/v1/minds/Echo/turns",
            json.dumps(body),
            {"Authorization": f"Bearer {server.token()}", "Content-Type": "application/json"},
        )
        assert gate.received.wait(120)
        con.close()  # the client goes away while the model is still answering
        gate.release.set()
        # Turns on one mind run one at a time: once this one is answered, the other is done.
        after = mock_turn(server, "and then")

    assert after.status == 200
    recorded = turns(server.homes[0])
    assert recorded[-2:] == [
        {"seq": after.json()["seq"] - 1, "status": "complete"},
        {"seq": after.json()["seq"], "status": "complete"},
    ]
    listed = server.request("GET", "/v1/minds/Echo/commitments").json()
    assert "water the plants" in [c["text"] for c in listed]
    assert verified(server.homes[0])


def test_a_model_failure_is_recorded_and_answered_as_such_streamed_or_not(
    server: Server,
) -> None:
    with failing_provider(401) as base:
        body = {"text": "will fail", "model": "openai/stub", "api_base": base}
        plain = server.request("POST", "/v1/minds/Echo/turns", body)
        con = server.connection()
        con.request(
            "POST",
            "/v1/minds/Echo/turns",
            json.dumps({**body, "stream": True}),
            {"Authorization": f"Bearer {server.token()}", "Content-Type": "application/json"},
        )
        streamed = list(sse_events(con.getresponse()))
        con.close()

    # The provider refused the key: retrying cannot help, so a 4xx no client retries.
    assert plain.status == 424
    assert plain.json()["error"]["code"] == "model_auth_failed"
    assert plain.json()["mind_turn"]["status"] == "failed"
    assert "fake provider says 401" in plain.json()["mind_turn"]["failure"]["message"]
    assert [e for e, _ in streamed] == ["error"]
    assert streamed[0][1]["mind_turn"]["status"] == "failed"
    assert streamed[0][1]["error"]["message"].startswith("generation failed")
    assert turns(server.homes[0])[-2:] == [
        {"seq": plain.json()["mind_turn"]["seq"], "status": "failed"},
        {"seq": plain.json()["mind_turn"]["seq"] + 1, "status": "failed"},
    ]


def test_serving_a_folder_without_a_mind_is_refused_in_one_line(tmp_path: Path) -> None:
    result = run_mind(tmp_path / "none", "serve", "--home", str(tmp_path / "none"))

    assert result.returncode == 1
    assert result.stderr.startswith("Error: no mind at ")
    assert len(result.stderr.strip().splitlines()) == 1


def turn_in_flight(running: Server, gate: Any, answers: list[Reply]) -> threading.Thread:
    """A turn sent to the server, caught waiting on the held model; `answers` gets its reply."""
    body = {"text": "in flight", "model": "openai/stub", "api_base": gate.url}
    client = threading.Thread(
        target=lambda: answers.append(running.request("POST", "/v1/minds/Echo/turns", body))
    )
    client.start()
    assert gate.received.wait(120)
    return client


def test_sigterm_while_the_model_answers_exits_with_the_turn_finished_or_interrupted(
    tmp_path: Path,
) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    running = start_server([home], **PROVIDER_ENV)
    try:
        answers: list[Reply] = []
        with held_provider("Finished.") as gate:
            client = turn_in_flight(running, gate, answers)
            running.process.send_signal(signal.SIGTERM)
            gate.release.set()  # the model answers as the stop begins: either may come first
            code = running.process.wait(120)
            client.join(120)
    finally:
        running.kill()

    assert code == 0
    recorded = turns(home)
    assert recorded in ([{"seq": 1, "status": "complete"}], [{"seq": 1, "status": "interrupted"}])
    answer = answers[0]
    seen = (recorded, answer.status, answer.body[:300])
    if recorded[0]["status"] == "interrupted":
        assert answer.status == 503, seen
    if answer.status == 200:
        assert recorded[0]["status"] == "complete" and answer.json()["reply"] == "Finished."
    else:  # the stop's grace ran out first, whether or not the turn then finished
        assert answer.status == 503, seen
        assert answer.json()["error"]["code"] == "server_stopping"
    assert not (home / "server.json").exists()
    assert not (home / "server.sock").exists()
    assert verified(home)


def test_sigterm_while_the_model_never_answers_exits_and_records_the_turn_interrupted(
    tmp_path: Path,
) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    running = start_server([home], **PROVIDER_ENV)
    try:
        answers: list[Reply] = []
        with held_provider("Never sent.") as gate:
            client = turn_in_flight(running, gate, answers)
            running.process.send_signal(signal.SIGTERM)
            code = running.process.wait(120)  # the model is held until after the exit
            client.join(120)
    finally:
        running.kill()

    assert code == 0
    assert answers[0].status == 503
    assert answers[0].json()["error"]["code"] == "server_stopping"
    assert turns(home) == [{"seq": 1, "status": "interrupted"}]
    log = run_mind(home, "log", "--json", "--limit", "5")
    assert "the server stopped before this turn's model answered" in log.stdout
    assert "1 recorded interrupted" in (home / "logs" / "server.log").read_text()
    assert not (home / "server.json").exists()
    assert verified(home)
    after = run_mind(home, "turn", "and now?", "--model", "mock", "--mock-reply", "Here.")
    assert after.returncode == 0, after.stderr


def test_server_status_and_stop_find_the_server_through_the_home(tmp_path: Path) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    running = start_server([home])
    try:
        status = json.loads(run_mind(home, "server", "status", "--json").stdout)
        stream = running.connection()
        stream.request(
            "GET", "/v1/minds/Echo/events", headers={"Authorization": f"Bearer {running.token()}"}
        )
        listening = stream.getresponse()
        stopped = run_mind(home, "server", "stop", "--json")
        code = running.process.wait(120)
        ended = listening.read()  # an open event stream ends when the server stops
        stream.close()
    finally:
        running.kill()
    after = json.loads(run_mind(home, "server", "status", "--json").stdout)

    assert status["running"] is True
    assert status["pid"] == running.process.pid
    assert status["url"] == running.url
    assert status["minds"] == ["Echo"]
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["stopped"] is True
    assert code == 0
    assert after == {"running": False, "home": str(home)}
    assert ended.startswith(b": connected")


def test_an_idle_server_exits_by_itself(tmp_path: Path) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    running = start_server([home], "--idle-exit", "0.005")  # 0.3 s
    try:
        code = running.process.wait(120)
    finally:
        running.kill()

    assert code == 0
    assert not (home / "server.json").exists()
    assert "no request for" in (home / "logs" / "server.log").read_text()


def test_two_minds_with_one_name_are_refused_in_one_line(tmp_path: Path) -> None:
    first = init_home(tmp_path / "a", "Echo")
    second = init_home(tmp_path / "b", "Echo")

    result = run_mind(first, "serve", "--home", str(first), "--home", str(second), "--port", "0")

    assert result.returncode == 1
    assert result.stderr.startswith("Error: two homes hold a mind called 'Echo'")
    assert len(result.stderr.strip().splitlines()) == 1


def test_two_minds_whose_env_files_disagree_on_a_provider_key_are_refused(
    tmp_path: Path,
) -> None:
    first = init_home(tmp_path / "a", "Echo")
    second = init_home(tmp_path / "b", "Nova")
    (first / ".env").write_text("OPENAI_API_KEY=sk-first-aaaaaaaaaaaa\n")
    (second / ".env").write_text("OPENAI_API_KEY=sk-second-bbbbbbbbbbb\n")

    result = run_mind(first, "serve", "--home", str(first), "--home", str(second), "--port", "0")

    assert result.returncode == 1
    assert "set OPENAI_API_KEY differently" in result.stderr
    assert "sk-first" not in result.stderr and "sk-second" not in result.stderr


def test_a_bind_other_machines_can_reach_needs_allow_remote(tmp_path: Path) -> None:
    home = init_home(tmp_path / "a", "Echo")

    result = run_mind(home, "serve", "--host", "0.0.0.0", "--port", "0")

    assert result.returncode == 1
    assert "--allow-remote" in result.stderr
    assert not (home / "server.json").exists()


def test_a_malformed_cors_origin_is_refused_in_one_line_before_serving(tmp_path: Path) -> None:
    home = init_home(tmp_path / "a", "Echo")

    result = run_mind(home, "serve", "--port", "0", "--cors", "localhost:5173")

    assert result.returncode == 1
    assert result.stderr.startswith("Error: --cors 'localhost:5173': an origin is scheme://")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (home / "server.json").exists()


def test_cors_names_the_origins_whose_pages_may_call_the_server(tmp_path: Path) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    page = "http://localhost:5173"
    running = start_server([home], "--cors", f"{page}/", "--cors", "https://example.com")
    try:
        asked = {"Origin": page, "Access-Control-Request-Method": "POST"}
        preflight = running.request("OPTIONS", "/v1/chat/completions", token=None, headers=asked)
        other = running.request("GET", "/v1/minds", headers={"Origin": "https://evil.example"})
    finally:
        running.kill()

    assert preflight.status == 200
    assert preflight.headers["access-control-allow-origin"] == page
    assert other.status == 200 and "access-control-allow-origin" not in other.headers


def test_print_token_makes_one_private_token_and_prints_the_same_one_again(
    tmp_path: Path,
) -> None:
    home = init_home(tmp_path / "a", "Echo")

    first = run_mind(home, "serve", "--print-token")
    second = run_mind(home, "serve", "--print-token")

    assert first.returncode == 0
    assert first.stdout == second.stdout
    assert len(first.stdout.strip()) >= 40
    assert (home / "server-token").stat().st_mode & 0o077 == 0


def test_a_client_chosen_api_base_never_receives_the_servers_provider_key(
    server: Server,
) -> None:
    with held_provider("Hello.") as gate:
        gate.release.set()
        body = {"text": "who gets the key?", "model": "openai/stub", "api_base": gate.url}
        answer = server.request("POST", "/v1/minds/Echo/turns", body)

    assert answer.status == 200
    assert gate.authorizations
    assert all(PROVIDER_ENV["OPENAI_API_KEY"] not in a for a in gate.authorizations)


def stale_record(home: Path, pid: int, **fields: Any) -> Path:
    path = home / "server.json"
    record = {"pid": pid, "started": "2026-01-01T00:00:00+00:00", "url": "http://127.0.0.1:1"}
    path.write_text(json.dumps({**record, **fields}), encoding="utf-8")
    return path


def test_server_stop_never_signals_a_process_that_reused_a_stale_pid(tmp_path: Path) -> None:
    import subprocess
    import sys

    home = init_home(tmp_path / "echo", "Echo")
    # A process begun after server.json's `started`: the pid of a dead server, reused.
    bystander = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        path = stale_record(home, bystander.pid, started="2020-01-01T00:00:00+00:00")
        status = run_mind(home, "server", "status")
        stopped = run_mind(home, "server", "stop", "--timeout", "1")
        still_running = bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()

    assert still_running
    assert status.returncode == 0 and "no server is serving" in status.stdout
    assert "stale" in status.stdout
    assert stopped.returncode == 0 and "stale" in stopped.stdout
    assert not path.exists()


@pytest.mark.parametrize("record", [{"pid": 1}, {"pid": 1, "started": 5}, {"pid": "1"}, [1]])
def test_server_status_and_stop_call_a_malformed_server_json_stale_in_one_line(
    tmp_path: Path, record: Any
) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    (home / "server.json").write_text(json.dumps(record), encoding="utf-8")

    status = run_mind(home, "server", "status")
    stopped = run_mind(home, "server", "stop", "--timeout", "1", "--json")

    assert status.returncode == 0 and status.stderr == ""
    assert status.stdout.strip().splitlines() == [
        f"no server is serving {home} (server.json is stale: its process is not this home's server)"
    ]
    assert stopped.returncode == 0 and stopped.stderr == ""
    assert json.loads(stopped.stdout)["stale_file_removed"] is True
    assert not (home / "server.json").exists()


def test_each_home_of_a_multi_home_server_is_told_only_about_itself(tmp_path: Path) -> None:
    echo = init_home(tmp_path / "echo", "Echo")
    nova = init_home(tmp_path / "nova", "Nova")
    running = start_server([echo, nova, echo])  # a home named twice is served once
    try:
        files = {h: json.loads((h / "server.json").read_text()) for h in (echo, nova)}
        status = json.loads(run_mind(nova, "server", "status", "--json").stdout)
    finally:
        running.kill()

    assert (files[echo]["homes"], files[echo]["minds"]) == ([str(echo)], ["Echo"])
    assert (files[nova]["homes"], files[nova]["minds"]) == ([str(nova)], ["Nova"])
    assert str(echo) not in json.dumps(status) and "Echo" not in json.dumps(status)


def test_a_mind_renamed_while_served_still_stops_cleanly(tmp_path: Path) -> None:
    home = init_home(tmp_path / "echo", "Echo")
    running = start_server([home])
    try:
        renamed = run_mind(home, "identity", "adopt", "Orion", "--reason", "a new start")
        body = {"text": "hi", "model": "mock", "mock_reply": "Hello."}
        answer = running.request("POST", "/v1/minds/Echo/turns", body)
        code = running.stop()
    finally:
        running.kill()

    assert renamed.returncode == 0, renamed.stderr
    assert answer.status == 200
    assert code == 0
    assert not (home / "server.json").exists()
    assert not (home / "server.sock").exists()
