"""A request still running when a stop's grace runs out is answered 503 `server_stopping` in the
one error shape (in-process, over raw ASGI, so the stop's two paths can be driven exactly: the
deadline seen by the request, and uvicorn's own stop wait cancelling it first)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mindledger.compose import Home
from mindledger.service.app import Extension, ServerState, build_app
from mindledger.service.endpoints import Call, Endpoint
from mindledger.service.minds import Minds


@pytest.fixture
def minds(mind_home: Path) -> Iterator[Minds]:
    opened = Minds.open([Home(mind_home)])
    yield opened
    opened.close(10)


async def hang_until_stopped(minds: Minds, state: ServerState, cancel: bool) -> list[Any]:
    """GET a route whose handler never returns; once it runs, stop (`cancel`: and cancel the
    request's task, as uvicorn does when its own wait runs out). The messages sent back."""
    started = asyncio.Event()

    async def hang(call: Call) -> Any:
        started.set()
        await asyncio.Event().wait()

    route = Endpoint("GET", "/v1/hang", hang, "Never answers.")
    app = build_app(minds, extensions=[Extension(endpoints=[route])], state=state)
    token = next(iter(minds)).token
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/v1/hang",
        "raw_path": b"/v1/hang",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"authorization", f"Bearer {token}".encode()), (b"host", b"test")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    request = asyncio.create_task(app(scope, receive, send))
    await asyncio.wait_for(started.wait(), 60)
    state.stopping.set()
    if cancel:
        request.cancel()
    else:
        state.stop_deadline = time.monotonic()
    await asyncio.wait_for(request, 60)
    return sent


@pytest.mark.parametrize("cancel", [False, True], ids=["deadline", "uvicorn-cancel"])
def test_a_request_running_at_the_stop_is_answered_503_server_stopping(
    minds: Minds, cancel: bool
) -> None:
    sent = asyncio.run(hang_until_stopped(minds, ServerState(), cancel))

    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert start["status"] == 503
    assert json.loads(body)["error"]["code"] == "server_stopping"
    assert json.loads(body)["error"]["type"] == "server_error"


@pytest.mark.parametrize("finished", [True, False])
def test_a_stopped_server_leaves_without_tearing_the_interpreter_down(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, finished: bool
) -> None:
    """Once the server has stopped (its minds closed, or a running turn recorded interrupted)
    the process ends at once, whether or not every turn finished: the interpreter's own
    teardown (a final garbage collection over LiteLLM's objects) took 3-4 s of a stop that is
    promised within 2 s."""
    import mindledger.service.__main__ as entry
    import mindledger.service.process as process

    ended: list[int] = []

    class Ended(Exception):
        pass

    def end(code: int) -> None:
        ended.append(code)
        raise Ended

    monkeypatch.setattr(process, "serve", lambda minds, options, announce: finished)
    monkeypatch.setattr(process, "check_bind", lambda options: None)
    monkeypatch.setattr(Minds, "open", classmethod(lambda cls, homes: None))
    monkeypatch.setattr(entry.os, "_exit", end)
    spec = {"homes": [str(tmp_path)], "host": "127.0.0.1", "port": 0, "idle_s": 0}
    with pytest.raises(Ended):
        entry.serve({**spec, "allow_remote": False, "max_body": 1 << 20, "json": True})
    assert ended == [0]
