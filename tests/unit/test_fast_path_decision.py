"""The fast path's decision from argv and the environment alone (cli.fast_path, cli.server_client):
which calls a server may take, and which servers may take them."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.cli import server_client as sc
from mindledger.cli.fast_path import Call, home_path, parse, run_via_server, turn_body


def test_a_plain_turn_is_parsed_with_its_options_and_the_last_home() -> None:
    call = parse(["--home", "a", "turn", "hi", "--model=mock", "--mock-reply", "x", "--home", "b"])

    assert call == Call("turn", "hi", {"--model": "mock", "--mock-reply": "x"}, set(), "b")


def test_a_recall_with_json_and_no_server_flags_is_parsed() -> None:
    call = parse(["recall", "--json", "what", "--budget", "60", "--no-server"])

    assert call == Call("recall", "what", {"--budget": "60"}, {"--json", "--no-server"}, None)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["status"],
        ["--version"],
        ["turn"],
        ["turn", "a", "b"],
        ["turn", "--help"],
        ["turn", "hi", "--model"],
        ["turn", "hi", "--json=1"],
        ["turn", "--", "-x"],
        ["recall", "q", "--as-of", "3"],
        ["recall", "q", "--model", "mock"],
        ["--home"],
        ["-v", "turn", "hi"],
        ["turn", "bad \udcff byte"],
    ],
)
def test_anything_but_a_plain_turn_or_recall_is_left_to_click(argv: list[str]) -> None:
    assert parse(argv) is None


@given(
    st.lists(
        st.sampled_from(
            [
                "turn",
                "recall",
                "hi",
                "-",
                "--json",
                "--budget",
                "300",
                "--home",
                "h",
                "--model=mock",
                "--x",
                "--",
                "=",
                "--as-of",
                "--stop",
                "--temperature",
                "--seed=1.5",
            ]
        ),
        max_size=8,
    )
)
def test_parsing_any_arguments_never_fails_and_keeps_one_argument(argv: list[str]) -> None:
    call = parse(argv)

    assert call is None or (call.command in ("turn", "recall") and call.argument in argv)
    if call is not None and call.command == "turn":
        body = turn_body(call)
        assert body is None or body["text"] == call.argument


def test_the_home_is_the_flag_else_mind_home_else_the_data_directory(tmp_path: Path) -> None:
    plain = Call("turn", "hi")

    assert home_path(Call("turn", "hi", home="rel"), {}) == Path("rel").absolute()
    assert home_path(plain, {"MIND_HOME": str(tmp_path / "m")}) == tmp_path / "m"
    assert home_path(plain, {"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "mindledger"


@pytest.mark.parametrize(
    "options",
    [
        {"--model": "mock"},  # mock without a reply
        {"--mock-reply": "x", "--model": "openai/gpt-4o-mini"},
        {"--model": "mock", "--mock-reply": "x", "--budget": "199"},
        {"--model": "mock", "--mock-reply": "x", "--budget": "many"},
        {"--model": "mock", "--mock-reply": "@/nonexistent/reply.txt"},
    ],
)
def test_arguments_the_command_would_refuse_run_in_process(options: dict[str, str]) -> None:
    assert turn_body(Call("turn", "hi", options)) is None


def test_a_mock_reply_file_is_read_by_the_client(tmp_path: Path) -> None:
    (tmp_path / "reply.txt").write_text("Hello\nCOMMIT: x", encoding="utf-8")
    call = Call("turn", "hi", {"--model": "mock", "--mock-reply": f"@{tmp_path / 'reply.txt'}"})

    assert turn_body(call) == {
        "text": "hi",
        "budget": 2000,
        "model": "mock",
        "mock_reply": "Hello\nCOMMIT: x",
    }


def test_a_system_prompt_and_sampling_options_go_to_the_server_as_the_command_reads_them() -> None:
    argv = ["turn", "hi", "--system", "Be brief.", "--stop", "END", "--temperature", "0.5"]
    argv += ["--top-p=1", "--max-tokens", " 64", "--seed", "-3", "--stop=#", "--temperature", "9"]

    call = parse(argv)

    assert call is not None and call.many == {"--stop": ["END", "#"]}
    assert turn_body(call) == {
        "text": "hi",
        "budget": 2000,
        "system": "Be brief.",
        # the last --temperature, as click takes it; its range is the server's (the floor's)
        "sampling": {
            "temperature": 9.0,
            "top_p": 1.0,
            "max_tokens": 64,
            "seed": -3,
            "stop": ["END", "#"],
        },
    }


@pytest.mark.parametrize(
    "options",
    [{"--temperature": "warm"}, {"--temperature": "nan"}, {"--top-p": "inf"}, {"--seed": "1.5"}],
)
def test_a_sampling_value_that_is_no_number_runs_in_process(options: dict[str, str]) -> None:
    assert turn_body(Call("turn", "hi", options)) is None


def test_an_empty_message_runs_in_process() -> None:
    assert turn_body(Call("turn", "  ", {"--model": "mock", "--mock-reply": "x"})) is None


def test_mind_no_server_is_off_only_when_empty_or_false() -> None:
    assert [sc.no_server({"MIND_NO_SERVER": v}) for v in ("1", "yes", "", "0", "false")] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert not sc.no_server({})


def test_the_fingerprint_follows_settings_and_keys_but_not_the_terminal(tmp_path: Path) -> None:
    env = {"MIND_NOW": "2026-05-01T09:00:00Z", "OPENAI_API_KEY": "sk-secret", "TERM": "xterm"}
    base = sc.env_fingerprint(env, tmp_path, "token")

    assert (
        sc.env_fingerprint({**env, "TERM": "dumb", "MIND_NO_SERVER": "0"}, tmp_path, "token")
        == base
    )
    assert sc.env_fingerprint({**env, "OPENAI_API_KEY": "sk-other"}, tmp_path, "token") != base
    assert sc.env_fingerprint({**env, "MIND_MODEL_RETRIES": "3"}, tmp_path, "token") != base
    assert sc.env_fingerprint(env, tmp_path, "another token") != base
    for provider_variable in (
        "GOOGLE_APPLICATION_CREDENTIALS",
        "VERTEXAI_PROJECT",
        "VERTEXAI_LOCATION",
        "DATABRICKS_CLIENT_ID",
        "DATABRICKS_CLIENT_SECRET",
    ):
        assert sc.env_fingerprint({**env, provider_variable: "x"}, tmp_path, "token") != base
    assert "sk-secret" not in base
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    assert sc.env_fingerprint(env, tmp_path, "token") != base


@pytest.fixture
def served_home(tmp_path: Path) -> Iterator[Path]:
    """A home that looks served by this very process: a private socket, token and server.json."""
    home = tmp_path / "m"
    home.mkdir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(home / sc.SOCKET_FILE))
    os.chmod(home / sc.SOCKET_FILE, 0o600)
    (home / sc.TOKEN_FILE).write_text("tok\n", encoding="utf-8")
    os.chmod(home / sc.TOKEN_FILE, 0o600)
    write_info(home, env_fingerprint=sc.env_fingerprint({}, home, "tok"))
    yield home
    listener.close()


def write_info(home: Path, **fields: object) -> None:
    # `started` as a server writes it: after its process began (this one, here).
    started = datetime.now(UTC).isoformat(timespec="seconds")
    info = {"pid": os.getpid(), "started": started, "version": sc.package_version()}
    info |= {"homes": [str(home)], "minds": ["Echo"], **fields}
    (home / sc.INFO_FILE).write_text(json.dumps(info), encoding="utf-8")


def test_a_live_server_of_ours_with_the_same_settings_is_found(served_home: Path) -> None:
    server = sc.find_server(served_home, {})

    assert server is not None and (server.name, server.token) == ("Echo", "tok")


def test_a_server_with_other_settings_is_not_used(served_home: Path) -> None:
    assert sc.find_server(served_home, {"MIND_NOW": "2026-01-01T00:00:00Z"}) is None


def test_a_stale_server_json_means_no_server(served_home: Path) -> None:
    write_info(
        served_home, pid=2**22 + 12345, env_fingerprint=sc.env_fingerprint({}, served_home, "tok")
    )

    assert sc.find_server(served_home, {}) is None


def test_a_server_json_whose_pid_began_after_it_was_written_means_no_server(
    served_home: Path,
) -> None:
    write_info(
        served_home,
        started="2020-01-01T00:00:00+00:00",  # this process began later: a reused pid
        env_fingerprint=sc.env_fingerprint({}, served_home, "tok"),
    )

    assert sc.find_server(served_home, {}) is None
    assert sc.read_info(served_home) is None


@pytest.mark.parametrize("started", [None, 5, "not a time"])
def test_a_server_json_without_a_usable_started_means_no_server(
    served_home: Path, started: object
) -> None:
    write_info(served_home, started=started)

    assert sc.read_info(served_home) is None


def test_a_server_of_another_version_is_not_used(served_home: Path) -> None:
    write_info(
        served_home,
        version="0.0.0-other",
        env_fingerprint=sc.env_fingerprint({}, served_home, "tok"),
    )

    assert sc.find_server(served_home, {}) is None


def test_a_socket_others_may_open_is_not_used(served_home: Path) -> None:
    os.chmod(served_home / sc.SOCKET_FILE, 0o666)

    assert sc.find_server(served_home, {}) is None


def test_no_server_is_started_for_a_folder_that_is_not_a_mind(tmp_path: Path) -> None:
    assert not sc.may_start_server(tmp_path)
    assert not sc.may_start_server(tmp_path / "missing")


def test_no_second_server_is_started_while_one_is_starting(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    assert sc.may_start_server(tmp_path)
    (tmp_path / sc.STARTING_FILE).write_text("1\n", encoding="utf-8")

    assert not sc.may_start_server(tmp_path)


def _give_away(path: Path) -> None:
    """Make `path` another user's (needs root; skipped otherwise)."""
    try:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    except PermissionError:
        pytest.skip("changing a file's owner needs root")


def test_a_foreign_home_starts_no_server(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    _give_away(tmp_path)

    assert not sc.may_start_server(tmp_path)


def test_a_socket_of_another_user_is_not_used(served_home: Path) -> None:
    _give_away(served_home / sc.SOCKET_FILE)

    assert sc.find_server(served_home, {}) is None


def _chunked(body: bytes, size: int) -> bytes:
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


@given(st.binary(max_size=300), st.integers(1, 50))
def test_a_chunked_answer_is_read_whole(body: bytes, size: int) -> None:
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + _chunked(body, size)

    assert sc.parse_response(raw) == (200, body)


def test_an_answer_with_a_length_is_read_to_its_length() -> None:
    raw = b"HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\nx: y\r\n\r\n{}"

    assert sc.parse_response(raw) == (404, b"{}")


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
    ],
)
def test_an_answer_cut_off_means_the_server_was_lost(raw: bytes) -> None:
    with pytest.raises(sc.ServerLost):
        sc.parse_response(raw)


def test_a_request_to_a_socket_nobody_listens_on_was_never_taken(tmp_path: Path) -> None:
    path = tmp_path / "gone.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.close()  # the file stays, nobody listens: what a killed server leaves

    with pytest.raises(sc.ServerUnavailable):
        sc.exchange(str(path), b"GET / HTTP/1.1\r\n\r\n")


def _answer_once(listener: socket.socket, reply: bytes) -> threading.Thread:
    """Accept one connection, read the whole request, send `reply` (maybe nothing), close."""

    def serve() -> None:
        conn, _ = listener.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        while len(body) < length:
            body += conn.recv(65536)
        conn.sendall(reply)
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def listening(served_home: Path) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    (served_home / sc.SOCKET_FILE).unlink()
    listener.bind(str(served_home / sc.SOCKET_FILE))
    os.chmod(served_home / sc.SOCKET_FILE, 0o600)
    listener.listen(1)
    return listener


TURN_ARGS = ["turn", "hi", "--model", "mock", "--mock-reply", "x"]


def test_a_server_lost_after_taking_a_turn_is_reported_and_the_turn_not_run_again(
    served_home: Path, listening: socket.socket, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = _answer_once(listening, b"")  # took the request, then died

    code = run_via_server(["--home", str(served_home), *TURN_ARGS], {})

    thread.join(10)
    assert code == 1
    assert "not run again" in capsys.readouterr().err


def test_a_server_that_refuses_a_turn_leaves_it_to_the_in_process_command(
    served_home: Path, listening: socket.socket
) -> None:
    body = b'{"error": {"code": "bad_request", "message": "no"}}'
    reply = b"HTTP/1.1 400 Bad Request\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    thread = _answer_once(listening, reply)

    code = run_via_server(["--home", str(served_home), *TURN_ARGS], {})

    thread.join(10)
    assert code is None


def test_a_recall_whose_server_is_lost_runs_in_process(
    served_home: Path, listening: socket.socket
) -> None:
    thread = _answer_once(listening, b"HTTP/1.1 200 OK\r\ncontent-le")

    code = run_via_server(["--home", str(served_home), "recall", "q"], {})

    thread.join(10)
    assert code is None


def test_a_turn_answer_that_is_no_turn_is_reported_not_run_again(
    served_home: Path, listening: socket.socket, capsys: pytest.CaptureFixture[str]
) -> None:
    body = b'{"hello": "world"}'
    reply = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    thread = _answer_once(listening, reply)

    code = run_via_server(["--home", str(served_home), *TURN_ARGS], {})

    thread.join(10)
    assert code == 1 and "not a turn" in capsys.readouterr().err


@pytest.fixture
def background_server(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A home whose server.json names a live process of ours as its server, with the home's
    files as they were when it 'started'."""
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield tmp_path, process
    finally:
        process.kill()
        process.wait()


def _record(home: Path, pid: int, idle_exit_s: int) -> None:
    write_info(home, pid=pid, idle_exit_s=idle_exit_s, home_files=sc.home_files(home))
    os.chmod(home / sc.INFO_FILE, 0o600)


def test_a_background_server_is_stopped_once_the_home_s_env_file_changed(
    background_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    home, process = background_server
    _record(home, process.pid, idle_exit_s=600)
    (home / ".env").write_text("OPENAI_API_KEY=sk-new\n", encoding="utf-8")

    starts = sc.may_start_server(home)

    assert not starts  # this call runs in-process; the next, once it has gone, starts one
    assert process.wait(timeout=120) == -signal.SIGTERM  # a deadline for a busy machine


def test_a_background_server_is_kept_while_the_home_s_files_are_unchanged(
    background_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    home, process = background_server
    _record(home, process.pid, idle_exit_s=600)

    assert not sc.may_start_server(home)
    assert process.poll() is None


def test_a_server_started_by_hand_is_never_stopped_by_a_client(
    background_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    home, process = background_server
    _record(home, process.pid, idle_exit_s=0)
    (home / ".env").write_text("OPENAI_API_KEY=sk-new\n", encoding="utf-8")

    assert not sc.may_start_server(home)
    assert process.poll() is None


def test_no_server_is_started_where_its_socket_path_would_be_too_long(tmp_path: Path) -> None:
    home = tmp_path / ("h" * (sc.UNIX_PATH_MAX - len(str(tmp_path)) - len(sc.SOCKET_FILE)))
    home.mkdir()
    (home / "config.json").write_text("{}", encoding="utf-8")

    assert len(os.fsencode(home / sc.SOCKET_FILE)) > sc.UNIX_PATH_MAX
    assert not sc.may_start_server(home)
    assert sc.may_start_server(tmp_path / "short") is False  # not a mind; the length is fine


def test_a_full_disk_on_the_server_is_its_one_line_not_a_lost_turn() -> None:
    body = {"error": {"message": "no space left to write", "code": "insufficient_storage"}}

    with pytest.raises(sc.ServerRefused, match=r"^no space left to write$"):
        sc._answer(507, json.dumps(body).encode())


def test_a_refusal_by_the_append_guard_runs_in_process() -> None:
    body = {"error": {"message": "cannot apply event at position 6", "code": "projection_stopped"}}

    with pytest.raises(sc.ServerUnavailable):
        sc._answer(409, json.dumps(body).encode())


def test_a_server_that_stopped_mid_request_is_lost_not_unavailable() -> None:
    # A 503 refusal means nothing was recorded (run it here); a stop mid-turn may have
    # recorded the turn interrupted, so it is not run again.
    def error(code: str) -> bytes:
        body = {"message": code, "type": "server_error", "param": None, "code": code}
        return json.dumps({"error": body}).encode()

    with pytest.raises(sc.ServerLost):
        sc._answer(503, error("server_stopping"))
    with pytest.raises(sc.ServerUnavailable):
        sc._answer(503, error("busy"))


def test_the_clients_version_is_the_one_the_server_records() -> None:
    # The server writes importlib.metadata's version into server.json; the client reads the
    # dist-info itself (without importing importlib.metadata), and must agree.
    from importlib.metadata import version

    from mindledger.cli.server_client import package_version

    assert package_version() == version("mindledger")


def test_the_fast_path_client_imports_only_the_standard_library() -> None:
    # What a `mind turn` through a warm server loads before and while it prints: the fast
    # path, its client and the printing it shares with the command tree.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import mindledger.cli.main, mindledger.cli.fast_path, mindledger.cli.server_client\n"
        "import mindledger.cli.render, mindledger.cli.output\n"
        "std = set(sys.stdlib_module_names)\n"
        "print(sorted(m for m in set(sys.modules) - before\n"
        "             if m.split('.')[0] not in std and m.split('.')[0] != 'mindledger'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_fast_path_client_leaves_the_costly_standard_modules_alone() -> None:
    # `socket` (its IntEnums), `hashlib` (OpenSSL) and `dataclasses` (inspect, ast, dis) were
    # two fifths of the client's imports; a turn whose reply has no concept line needs none.
    import subprocess
    import sys

    code = (
        "import mindledger.cli.main, mindledger.cli.fast_path, mindledger.cli.server_client\n"
        "import mindledger.cli.render, mindledger.cli.output, sys\n"
        "from mindledger.cli.turn_lines import effect_lines\n"
        "effect_lines({'cut_off': False, 'opened': [], 'closed': [], 'claims': [],\n"
        "  'reply_raw': 'Noted.', 'rejections': [], 'identity': {'changes': []},\n"
        "  'threads': []})\n"
        "costly = {'socket', 'hashlib', 'hmac', 'dataclasses', 'secrets'}\n"
        "print(sorted(costly & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("key", [b"", b"token", b"k" * 64, b"k" * 65, b"x" * 300])
@pytest.mark.parametrize("message", [b"", b"[[], [], []]", "é".encode() * 500])
def test_the_fingerprint_s_hmac_is_the_standard_one(key: bytes, message: bytes) -> None:
    import hashlib
    import hmac

    from mindledger.server_files import hmac_sha256

    assert hmac_sha256(key, message) == hmac.new(key, message, hashlib.sha256).hexdigest()


def test_an_answer_nested_deeper_than_the_parser_goes_means_the_server_was_lost() -> None:
    nested = b"[" * 100_000 + b"]" * 100_000

    with pytest.raises(sc.ServerLost):
        sc._answer(200, nested)
    with pytest.raises(sc.ServerLost):
        sc._sse_event("data: " + nested.decode())
