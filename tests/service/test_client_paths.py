"""The server names the mind's home (its path, a file in it) only to a client on this machine:
one elsewhere (an --allow-remote server's) is told "the mind's home" in error messages, the
`Mind-Warnings` header and the status, one on loopback or the home's socket the paths the
in-process command prints (service/clients.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import PersistenceError
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.domain.errors import ConflictError
from mindledger.error_report import within_home
from mindledger.notices import warn
from mindledger.service.app import Extension, build_app
from mindledger.service.clients import is_local
from mindledger.service.endpoints import WARNINGS_HEADER, Call, Endpoint
from mindledger.service.minds import Minds

REMOTE = ("203.0.113.9", 40000)  # TEST-NET-3: an address on no machine here
LOOPBACK = ("127.0.0.1", 40000)


@pytest.fixture
def served(mind_home: Path) -> Iterator[tuple[Minds, Any]]:
    async def warns(call: Call) -> Any:
        warn(f"the read model in {call.the_mind.home.path} is damaged; rebuilding it")
        return {"ok": True}

    async def refuses(call: Call) -> Any:
        raise ConflictError(f"cannot write {call.the_mind.home.path}/readmodel.duckdb now")

    async def full(call: Call) -> Any:
        raise PersistenceError("database or disk is full")

    minds = Minds.open([Home(mind_home)])
    extra = Extension(
        endpoints=[
            Endpoint("GET", "/v1/minds/{name}/warns", warns, "Warns naming the home."),
            Endpoint("GET", "/v1/minds/{name}/refuses", refuses, "Refuses naming the home."),
            Endpoint("GET", "/v1/minds/{name}/full", full, "Out of room."),
        ]
    )
    app = build_app(minds, extensions=[extra])

    def client(address: tuple[str, int]) -> TestClient:
        return TestClient(app, raise_server_exceptions=False, client=address)

    yield minds, client
    minds.close(10)


def told(served: tuple[Minds, Any], address: tuple[str, int], **headers: str) -> list[str]:
    """What a client at `address` is told by the warning, the refusal, the full disk and the
    status: the warning's line, the two messages, the status's home."""
    minds, client = served
    mind = next(iter(minds))
    auth = {"Authorization": f"Bearer {mind.token}", **headers}
    with client(address) as c:
        base = f"/v1/minds/{mind.name}"
        warned = c.get(f"{base}/warns", headers=auth).headers[WARNINGS_HEADER]
        refused = c.get(f"{base}/refuses", headers=auth).json()["error"]["message"]
        full = c.get(f"{base}/full", headers=auth).json()["error"]["message"]
        status = c.get(f"{base}/status", headers=auth).json()["home"]
    return [warned, refused, full, status]


def test_a_remote_client_is_told_the_mind_s_home_never_its_path(
    served: tuple[Minds, Any], mind_home: Path
) -> None:
    warned, refused, full, status = told(served, REMOTE)

    assert warned == '["Warning: the read model in the mind\'s home is damaged; rebuilding it"]'
    assert refused == "cannot write the mind's readmodel.duckdb now"
    assert full.startswith("no space left to write in the mind's home (")
    assert status == "the mind's home"
    assert str(mind_home) not in " ".join([warned, refused, full, status])


@pytest.mark.parametrize("address", [LOOPBACK, ("::1", 40000)])
def test_a_client_on_this_machine_is_told_the_paths_as_the_command_prints_them(
    served: tuple[Minds, Any], mind_home: Path, address: tuple[str, int]
) -> None:
    warned, refused, full, status = told(served, address)

    assert f"the read model in {mind_home} is damaged" in warned
    assert refused == f"cannot write {mind_home}/readmodel.duckdb now"
    assert full.startswith(f"no space left to write in {mind_home} (")
    assert status == str(mind_home)


def test_a_proxied_request_from_loopback_counts_as_remote(
    served: tuple[Minds, Any], mind_home: Path
) -> None:
    said = told(served, LOOPBACK, **{"X-Forwarded-For": "198.51.100.7"})

    assert str(mind_home) not in " ".join(said)


@pytest.mark.parametrize(
    ("client", "headers", "local"),
    [
        (None, [], True),  # the home's Unix socket
        (None, [(b"x-forwarded-for", b"198.51.100.7")], False),  # a proxy in front of it
        (None, [(b"x-real-ip", b"198.51.100.7")], False),
        (("127.0.0.1", 1), [], True),
        (("::1", 1), [], True),
        (("127.0.0.1", 1), [(b"x-forwarded-for", b"198.51.100.7")], False),
        (("127.0.0.1", 1), [(b"forwarded", b"for=198.51.100.7")], False),
        (("192.168.1.20", 1), [], False),
        (("testclient", 50000), [], False),  # not an address: not known to be here
    ],
)
def test_only_a_unix_socket_or_an_unforwarded_loopback_peer_is_local(
    client: tuple[str, int] | None, headers: list[tuple[bytes, bytes]], local: bool
) -> None:
    assert is_local({"type": "http", "client": client, "headers": headers}) is local


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("cannot write /srv/mind.", "cannot write the mind's home."),
        ("details in /srv/mind/logs/errors.log)", "details in the mind's logs/errors.log)"),
        ('file "/srv/mind/readmodel.duckdb"', 'file "the mind\'s readmodel.duckdb"'),
        ("/srv/mind2 and /srv/mind.bak stay", "/srv/mind2 and /srv/mind.bak stay"),
        ("no path here", "no path here"),
    ],
)
def test_a_home_s_path_is_named_within_the_home(said: str, shown: str) -> None:
    assert within_home(said, Path("/srv/mind")) == shown


def data_told(served: tuple[Minds, Any], address: tuple[str, int], **headers: str) -> str:
    """What a client at `address` reads of the home's paths in a query's rows (DuckDB's own
    catalog names its file) and a verify's anchors: both responses' text."""
    minds, client = served
    mind = next(iter(minds))
    auth = {"Authorization": f"Bearer {mind.token}", **headers}
    sql = "SELECT path FROM duckdb_databases() WHERE path IS NOT NULL"
    with client(address) as c:
        base = f"/v1/minds/{mind.name}"
        rows = c.post(f"{base}/query", headers=auth, json={"sql": sql})
        verified = c.post(f"{base}/verify", headers=auth)
    assert rows.status_code == 200 and verified.status_code == 200
    return rows.text + verified.text


def test_a_remote_client_reads_no_path_in_a_query_s_rows_or_a_verify_s_anchors(
    served: tuple[Minds, Any], mind_home: Path
) -> None:
    remote = data_told(served, REMOTE)
    proxied = data_told(served, LOOPBACK, **{"X-Forwarded-For": "198.51.100.7"})
    local = data_told(served, LOOPBACK)

    assert str(mind_home) not in remote + proxied
    assert "the mind's readmodel" in remote and "the mind's ledger-head.json" in remote
    assert f"{mind_home}/ledger-head.json" in local


def test_every_text_of_a_result_is_told_within_the_home_outside_a_local_request() -> None:
    from mindledger.service.clients import data_for_client

    rows = [{"path": "/srv/mind/readmodel.duckdb", "n": 3, "typed": ["/srv/mind/x.wal", None]}]

    told = data_for_client(rows, [Path("/srv/mind")])

    assert told == [
        {"path": "the mind's readmodel.duckdb", "n": 3, "typed": ["the mind's x.wal", None]}
    ]
