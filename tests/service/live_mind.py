"""A mind served over real HTTP for the agent frameworks' tests: the server's app run by uvicorn
on a thread of the test process (127.0.0.1, a free port: one per test module, no process to
start), its model the loopback upstream of tests/service/tool_provider.py set as the mind's own
(`openai/upstream` at that api_base), so a client needs nothing but the base URL, the mind's
key and `model="mind/Echo"`, as it would for any OpenAI-compatible model."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mindledger.service.minds import ServedMind

WAIT_S = 120  # a busy machine: uvicorn binds within moments, but the deadline is generous


@dataclass
class Live:
    """The served mind: its base URL (…/v1), its key, the upstream's request bodies."""

    base_url: str
    mind: ServedMind
    upstream: list[dict[str, Any]]

    @property
    def key(self) -> str:
        return self.mind.token

    def events(self, topic: str) -> list[dict[str, Any]]:
        """The payloads of the ledger's events of this type, oldest first, each with its
        aggregate's id as `id` (a turn's id for a turn's events)."""
        events = self.mind.log(limit=500)
        return [{**e.payload, "id": e.aggregate} for e in events if e.type == topic]


def _set_upstream(home: Path, url: str) -> None:
    """The mind's model: the upstream, as `mind model set` and config.json set one."""
    import mindledger
    from mindledger.compose import Home

    mind = mindledger.MindLedger(Home(home))
    try:
        mind.set_model("openai/upstream")
    finally:
        mind.close()
    config = home / "config.json"
    settings = json.loads(config.read_text()) if config.exists() else {}
    config.write_text(json.dumps({**settings, "api_base": url}))
    config.chmod(0o600)


def serve_live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """A new mind Echo served on 127.0.0.1 (for a module-scoped fixture)."""
    import uvicorn

    import mindledger
    from mindledger.compose import Home
    from mindledger.service.app import build_app
    from mindledger.service.minds import Minds
    from tests.service.tool_provider import tool_provider

    with tool_provider() as (url, requests):
        home = tmp_path_factory.mktemp("agents") / "mind"
        mindledger.init(home, name="Echo")
        _set_upstream(home, url)
        minds = Minds.open([Home(home)])
        config = uvicorn.Config(
            build_app(minds), host="127.0.0.1", port=0, log_level="warning", lifespan="on"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + WAIT_S
            while not server.started:
                assert thread.is_alive(), "the server's thread ended before it started"
                assert time.monotonic() < deadline, "the server did not start"
                threading.Event().wait(0.02)
            port = server.servers[0].sockets[0].getsockname()[1]
            yield Live(f"http://127.0.0.1:{port}/v1", next(iter(minds)), requests)
        finally:
            server.should_exit = True
            thread.join(WAIT_S)
            minds.close(10)
