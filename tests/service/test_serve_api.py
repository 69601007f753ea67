"""`mind serve` as a real process on loopback, over plain HTTP: every route answers what the
matching command prints with --json; tokens, errors, streams and turns."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from mindledger.cli.main import mind as mind_command
from tests.service.serving import (
    Server,
    UnixConnection,
    init_home,
    run_mind,
    send,
    sse_events,
    start_server,
)

NOW = "2026-05-01T09:00:00Z"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("serve")
    echo = init_home(root / "echo", "Echo")
    nova = init_home(root / "nova", "Nova")
    for home in (echo, nova):  # something to list in every read
        assert (
            run_mind(home, "concept", "define", "project.alpha", "The alpha project").returncode
            == 0
        )
    running = start_server([echo, nova])
    try:
        yield running
    finally:
        running.kill()


def cli_json(home: Path, *args: str) -> Any:
    """What `mind ARGS --json` prints, in-process, on `home`."""
    result = CliRunner().invoke(mind_command, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def turn(server: Server, text: str, reply: str, token: str = "", name: str = "Echo") -> Any:
    body = {"text": text, "model": "mock", "mock_reply": reply}
    answer = server.request("POST", f"/v1/minds/{name}/turns", body, token=token)
    assert answer.status == 200, answer.body
    return answer.json()


def test_health_needs_no_token_and_the_server_describes_itself(server: Server) -> None:
    health = server.request("GET", "/healthz", token=None)

    assert (health.status, health.json()) == (200, {"ok": True})
    described = json.loads((server.homes[0] / "server.json").read_text())
    assert described["url"] == server.url
    assert described["minds"] == ["Echo"]  # this home's mind only, not the other home's
    assert described["homes"] == [str(server.homes[0])]
    assert stat.S_IMODE((server.homes[0] / "server-token").stat().st_mode) == 0o600
    assert stat.S_IMODE((server.homes[0] / "server.sock").stat().st_mode) == 0o600
    assert stat.S_IMODE((server.homes[0] / "server.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((server.homes[0] / "logs" / "server.log").stat().st_mode) == 0o600
    assert stat.S_IMODE((server.homes[0] / "logs").stat().st_mode) == 0o700


def test_a_turn_answers_what_mind_turn_json_prints_and_the_reads_match_the_cli(
    server: Server,
) -> None:
    home = server.homes[0]
    data = turn(server, "Remember the report", "Noted.\nCOMMIT: send the report on Friday")

    assert data["status"] == "complete"
    assert data["reply"] == "Noted."
    assert data["identity"]["name"] == "Echo"
    assert set(data) >= {
        "turn", "seq", "status", "reply", "reply_raw", "opened", "closed", "claims", "threads",
        "rejections", "identity", "context", "context_tokens", "model", "usage", "latency_ms",
        "finish_reason", "cut_off", "failure", "events",
    }  # fmt: skip
    server.vectors_caught_up()  # recall shows the vectors' lag, which shrinks in the background
    reads = {
        "/commitments": ["commitments", "--json"],
        "/commitments?all=1": ["commitments", "--all", "--json"],
        "/concepts": ["concepts", "--json"],
        "/identity": ["identity", "--json"],
        "/log?limit=5": ["log", "--limit", "5", "--json"],
        "/log?turn=last": ["log", "--turn", "last", "--json"],
        "/recall?q=report&budget=500": ["recall", "report", "--budget", "500", "--json"],
    }
    for path, args in reads.items():
        answer = server.request("GET", f"/v1/minds/Echo{path}")
        assert (path, answer.status) == (path, 200)
        assert (path, answer.json()) == (path, cli_json(home, *args))
    verify = server.request("POST", "/v1/minds/Echo/verify")
    assert verify.json() == cli_json(home, "verify", "--json")
    query = server.request(
        "POST", "/v1/minds/Echo/query", {"sql": "SELECT cid, text FROM commitments"}
    )
    assert query.json() == cli_json(home, "query", "SELECT cid, text FROM commitments", "--json")
    status = server.request("GET", "/v1/minds/Echo/status").json()
    assert {k: v for k, v in status.items() if k != "projections"} == {
        k: v for k, v in cli_json(home, "status", "--json").items() if k != "projections"
    }
    threads = server.request("GET", "/v1/minds/Echo/threads?all=true")
    assert threads.status == 200 and isinstance(threads.json(), list)


def test_the_unix_socket_serves_the_same_api_with_the_same_token(server: Server) -> None:
    con = UnixConnection(server.homes[0] / "server.sock")

    answer = send(con, "GET", "/v1/minds", headers={"Authorization": f"Bearer {server.token()}"})

    assert (answer.status, answer.json()) == (200, [{"name": "Echo"}])


def test_a_token_opens_its_own_mind_only(server: Server) -> None:
    echo, nova = server.token(server.homes[0]), server.token(server.homes[1])

    missing = server.request("GET", "/v1/minds/Echo/status", token=None)
    wrong = server.request("GET", "/v1/minds/Echo/status", token="x" * 43)
    other = server.request("GET", "/v1/minds/Nova/commitments", token=echo)
    own = server.request("GET", "/v1/minds/Nova/commitments", token=nova)
    listed = server.request("GET", "/v1/minds", token=nova)

    assert missing.status == wrong.status == 401
    assert missing.json()["error"]["code"] == "unauthorized"
    assert missing.headers.get("www-authenticate", "").startswith("Bearer")
    assert (other.status, other.json()["error"]["code"]) == (404, "unknown_mind")
    assert own.status == 200
    assert listed.json() == [{"name": "Nova"}]
    assert echo != nova


@pytest.mark.parametrize(
    ("method", "path", "raw", "status", "code"),
    [
        ("POST", "/v1/minds/Echo/turns", b"{not json", 400, "bad_json"),
        ("POST", "/v1/minds/Echo/turns", b"[1, 2]", 400, "bad_request"),
        ("POST", "/v1/minds/Echo/turns", b'{"text": 5}', 400, "bad_request"),
        ("POST", "/v1/minds/Echo/turns", b'{"text": "hi", "model": "mock"}', 400, "bad_request"),
        (
            "POST",
            "/v1/minds/Echo/turns",
            b'{"text": "hi", "colour": "red"}',
            400,
            "unknown_parameter",
        ),
        # Integers of thousands of digits: past Python's limit to read (4300), and under it.
        (
            "POST",
            "/v1/minds/Echo/turns",
            b'{"text": "hi", "budget": 1' + b"0" * 5000 + b"}",
            400,
            "bad_json",
        ),
        (
            "POST",
            "/v1/minds/Echo/turns",
            b'{"text": "hi", "budget": 1' + b"0" * 4000 + b"}",
            400,
            "bad_request",
        ),
        ("POST", "/v1/minds/Echo/turns", b"x" * (1024 * 1024 + 1), 413, "too_large"),
        ("POST", "/v1/minds/Echo/query", b'{"sql": "DELETE FROM events"}', 403, "read_only"),
        ("POST", "/v1/minds/Echo/query", b'{"sql": "SELEC nonsense"}', 400, "bad_request"),
        ("GET", "/v1/minds/Nobody/status", None, 404, "unknown_mind"),
        ("GET", "/v1/minds/Echo/log?limit=many", None, 400, "bad_request"),
        ("GET", "/v1/minds/Echo/log?limit=0", None, 400, "bad_request"),
        ("GET", "/v1/minds/Echo/log?kind=nonsense", None, 400, "bad_request"),
        ("GET", "/v1/minds/Echo/recall", None, 400, "bad_request"),
        ("GET", "/v1/minds/Echo/recall?q=x&as_of=yesterday-ish", None, 400, "bad_request"),
        ("GET", "/v1/minds/Echo/commitments?colour=red", None, 400, "unknown_parameter"),
        ("GET", "/v1/nowhere", None, 404, "not_found"),
        ("DELETE", "/v1/minds/Echo/status", None, 405, "method_not_allowed"),
    ],
)
def test_bad_requests_get_a_json_error_naming_the_problem_and_change_nothing(
    server: Server, method: str, path: str, raw: bytes | None, status: int, code: str
) -> None:
    before = server.request("GET", "/v1/minds/Echo/status").json()["head"]

    answer = server.request(method, path, raw=raw)

    assert (answer.status, answer.json()["error"]["code"]) == (status, code)
    message = answer.json()["error"]["message"]
    assert message and "\n" not in message and "Traceback" not in message
    assert server.request("GET", "/v1/minds/Echo/status").json()["head"] == before


def test_every_served_route_is_in_the_openapi_document(server: Server) -> None:
    document = server.request("GET", "/openapi.json", token=None).json()

    assert document["openapi"].startswith("3.1")
    operations = {(m.upper(), p) for p, ops in document["paths"].items() for m in ops}
    expected = {
        ("GET", "/healthz"), ("GET", "/v1/minds"), ("POST", "/v1/minds/{name}/turns"),
        ("GET", "/v1/minds/{name}/recall"), ("GET", "/v1/minds/{name}/commitments"),
        ("GET", "/v1/minds/{name}/threads"), ("GET", "/v1/minds/{name}/concepts"),
        ("GET", "/v1/minds/{name}/identity"), ("GET", "/v1/minds/{name}/status"),
        ("GET", "/v1/minds/{name}/log"), ("POST", "/v1/minds/{name}/verify"),
        ("POST", "/v1/minds/{name}/query"), ("GET", "/v1/minds/{name}/events"),
    }  # fmt: skip
    assert expected <= operations


def test_a_streamed_turn_sends_the_reply_then_the_turn(server: Server) -> None:
    con = server.connection()
    body = {"text": "stream it", "model": "mock", "mock_reply": "Streamed.", "stream": True}
    con.request(
        "POST",
        "/v1/minds/Echo/turns",
        json.dumps(body),
        {"Authorization": f"Bearer {server.token()}", "Content-Type": "application/json"},
    )
    response = con.getresponse()

    events = list(sse_events(response))
    con.close()

    assert response.getheader("content-type", "").startswith("text/event-stream")
    kinds = [e for e, _ in events]
    assert len(kinds) > 2 and set(kinds[:-1]) == {"delta"} and kinds[-1] == "turn"
    assert "".join(data["text"] for _, data in events[:-1]) == "Streamed."
    assert events[-1][1]["reply"] == "Streamed." and events[-1][1]["status"] == "complete"


def test_the_events_stream_sends_each_new_ledger_event(server: Server) -> None:
    head = server.request("GET", "/v1/minds/Nova/status", token=server.token(server.homes[1]))
    after = head.json()["head"]["position"]
    con = server.connection()
    con.request(
        "GET",
        f"/v1/minds/Nova/events?after={after}",
        headers={"Authorization": f"Bearer {server.token(server.homes[1])}"},
    )
    response = con.getresponse()
    assert response.status == 200

    data = turn(server, "hello", "Hi.", token=server.token(server.homes[1]), name="Nova")
    received = []
    for event, payload in sse_events(response):
        received.append((event, payload))
        if payload["position"] >= data["events"]["last"]:
            break
    con.close()

    positions = [p["position"] for _, p in received]
    assert positions == list(range(after + 1, data["events"]["last"] + 1))
    assert {e for e, _ in received} == {"event"}
    assert (
        received[0][1]["type"].endswith("Turn.Started") or "turn" in received[0][1]["type"].lower()
    )


def test_a_second_server_on_a_served_home_is_refused_and_leaves_the_first_alone(
    server: Server,
) -> None:
    home = server.homes[0]

    second = run_mind(home, "serve", "--port", "0")

    assert second.returncode == 1
    assert second.stderr.startswith("Error: a server (pid ")
    assert "already serves" in second.stderr
    assert server.request("GET", "/v1/minds").status == 200
    assert (home / "server.sock").exists()


def test_the_request_log_has_one_line_per_request_and_no_token(server: Server) -> None:
    server.request("GET", f"/v1/minds/{quote('Echo')}/concepts")

    log_file, deadline = server.homes[0] / "logs" / "server.log", time.monotonic() + 60
    while "GET /v1/minds/Echo/concepts 200" not in (log := log_file.read_text()):
        assert time.monotonic() < deadline, log  # written just after the answer is sent
        time.sleep(0.05)

    assert "GET /v1/minds/Echo/concepts 200" in log
    assert server.token() not in log


def test_request_paths_are_logged_as_sent_so_no_client_can_forge_a_log_line(
    server: Server,
) -> None:
    forged = "/v1/minds/X%0A2026-12-01%2000:00:00,000%20INFO%20FORGED%20line/status"
    escapes = "/v1/minds/%1B%5B31mRED%00%E2%80%AE/status"

    unauthorised = server.request("GET", forged, token=None)
    authorised = server.request("GET", escapes)
    log_file = server.homes[0] / "logs" / "server.log"
    deadline = time.monotonic() + 60  # a line is written just after its answer is sent
    wanted = (f"GET {forged} 401", f"GET {escapes} 404")
    while not all(w in (log := log_file.read_text(encoding="utf-8")) for w in wanted):
        assert time.monotonic() < deadline, log
        time.sleep(0.05)

    assert unauthorised.status == 401 and authorised.status == 404
    assert not any(
        line.startswith("2026-12-01 00:00:00,000 INFO FORGED") for line in log.splitlines()
    )
    assert f"GET {forged} 401" in log
    assert f"GET {escapes} 404" in log
    assert not {"\x1b", "\x00", "\u202e"} & set(log)


@pytest.mark.parametrize("how", ["header", "query"])
def test_an_event_stream_from_beyond_the_head_is_refused(server: Server, how: str) -> None:
    beyond = "99999999"
    if how == "header":
        answer = server.request("GET", "/v1/minds/Echo/events", headers={"Last-Event-ID": beyond})
    else:
        answer = server.request("GET", f"/v1/minds/Echo/events?after={beyond}")

    assert answer.status == 400
    assert answer.json()["error"]["code"] == "bad_request"
    assert "beyond this ledger's head" in answer.json()["error"]["message"]


def test_a_knowledge_question_in_a_path_is_logged_by_its_parameter_name(server: Server) -> None:
    asked = server.request("GET", f"/v1/minds/Echo/knowledge/{quote('What is Zqxlogged?')}")

    log_file, deadline = server.homes[0] / "logs" / "server.log", time.monotonic() + 60
    wanted = f"GET /v1/minds/Echo/knowledge/{{ref}} {asked.status}"
    while wanted not in (log := log_file.read_text()):
        assert time.monotonic() < deadline, log  # written just after the answer is sent
        time.sleep(0.05)

    assert "Zqxlogged" not in log
