"""POST /v1/minds/NAME/forget on a real `mind serve`: only that mind's token forgets; what it
forgets leaves the server's answers and every file under the home, and the ledger verifies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.forget_memories import files_holding, stored_keys
from tests.service.serving import Server, init_home, run_mind, start_server

CANARY = "Zqxserved"
SURVIVOR = "ploverwing"


def serve(folder: Path) -> Iterator[Server]:
    echo = init_home(folder / "echo", "Echo")
    nova = init_home(folder / "nova", "Nova")
    for text in (f"Send the {CANARY} report by Friday", f"Water the {SURVIVOR} garden"):
        made = run_mind(echo, "commit", text)
        assert made.returncode == 0, made.stderr
    running = start_server([echo, nova])
    yield running
    running.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Shared by the requests that must change nothing."""
    yield from serve(tmp_path_factory.mktemp("forget-api"))


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[Server]:
    yield from serve(tmp_path)


def forget(server: Server, body: object, token: str | None = "") -> tuple[int, dict[str, object]]:
    answer = server.request("POST", "/v1/minds/Echo/forget", body, token=token)
    return answer.status, answer.json()


def cid_of(server: Server, word: str) -> str:
    listed = server.request("GET", "/v1/minds/Echo/commitments").json()
    rows = listed["items"] if isinstance(listed, dict) else listed
    return next(str(c["cid"]) for c in rows if word in str(c["text"]))


def commitment_texts(server: Server) -> str:
    return server.request("GET", "/v1/minds/Echo/commitments").body.decode()


def test_the_mind_s_token_forgets_a_commitment_everywhere_and_the_ledger_verifies(
    fresh_server: Server,
) -> None:
    server = fresh_server
    home = server.homes[0]
    cid = cid_of(server, CANARY)

    status, done = forget(server, {"selector": "commitment", "value": cid})

    assert status == 200, done
    assert done["counts"] == {"commitment": 1}
    assert CANARY not in commitment_texts(server)
    assert SURVIVOR in commitment_texts(server)
    recalled = server.request("GET", f"/v1/minds/Echo/recall?q={SURVIVOR}+{CANARY}").body
    assert SURVIVOR.encode() in recalled and CANARY.encode() not in recalled
    assert files_holding(home, CANARY) == []
    assert run_mind(home, "verify").returncode == 0


def test_a_dry_run_counts_and_changes_nothing(server: Server) -> None:
    keys = stored_keys(server.homes[0])

    status, plan = forget(
        server, {"selector": "commitment", "value": cid_of(server, CANARY), "dry_run": True}
    )

    assert (status, plan["dry_run"], plan["counts"]) == (200, True, {"commitment": 1})
    assert stored_keys(server.homes[0]) == keys
    assert CANARY in commitment_texts(server)


@pytest.mark.parametrize("token", [None, "x" * 43, "nova"])
def test_no_token_a_wrong_one_or_another_mind_s_forgets_nothing(
    server: Server, token: str | None
) -> None:
    keys = stored_keys(server.homes[0])
    sent = server.token(server.homes[1]) if token == "nova" else token

    status, error = forget(
        server, {"selector": "commitment", "value": cid_of(server, CANARY)}, token=sent
    )

    assert status in (401, 404), error
    assert set(error) == {"error"}
    assert stored_keys(server.homes[0]) == keys
    assert CANARY in commitment_texts(server)


@pytest.mark.parametrize(
    "body",
    [
        {"selector": "everything", "value": "x"},
        {"selector": "commitment", "value": 7},
        {"selector": "commitment"},
        {"selector": "before", "value": "yesterday"},
        {"selector": "turn", "value": ""},
    ],
)
def test_a_bad_forget_request_is_a_one_line_json_error_and_changes_nothing(
    server: Server, body: object
) -> None:
    keys = stored_keys(server.homes[0])

    status, error = forget(server, body)

    assert 400 <= status < 500, error
    message = error["error"]["message"]  # type: ignore[index]
    assert isinstance(message, str) and "\n" not in message and message
    assert stored_keys(server.homes[0]) == keys
