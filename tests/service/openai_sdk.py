"""A served mind for the OpenAI routes' tests: one home per test module, its app in this
process behind Starlette's test client, and the real OpenAI SDK talking to it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from starlette.testclient import TestClient

from mindledger.service.minds import Minds, ServedMind

SCRIPTED = {"model": "mock", "mock_reply": "Hello there, friend."}
MOCK = {"mind_options": SCRIPTED}


@dataclass
class Served:
    """The app's test client, the served minds, and Echo (the mind the key opens)."""

    client: TestClient
    minds: Minds

    @property
    def echo(self) -> ServedMind:
        return next(iter(self.minds))

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.echo.token}"}

    def sdk(self) -> openai.OpenAI:
        """The OpenAI SDK with Echo's key, talking to the app in this process."""
        return openai.OpenAI(
            base_url="http://testserver/v1",
            api_key=self.echo.token,
            http_client=self.client,
            max_retries=0,
        )

    def started(self) -> dict[str, Any]:
        """The last turn's start as the ledger records it (its text, system, sampling)."""
        events = self.echo.log(limit=50)
        return [e.payload for e in events if e.type == "mind.turn.started"][-1]

    def head(self) -> int:
        """The ledger's last position (a refused request leaves it where it was)."""
        return self.echo.status().head.position


def serve(tmp_path_factory: pytest.TempPathFactory, cors: tuple[str, ...] = ()) -> Iterator[Served]:
    """A new mind Echo served in-process (for a module-scoped fixture)."""
    import mindledger
    from mindledger.compose import Home
    from mindledger.service.app import build_app

    home = tmp_path_factory.mktemp("openai") / "mind"
    mindledger.init(home, name="Echo")
    minds = Minds.open([Home(Path(home))])
    with TestClient(build_app(minds, cors=cors), raise_server_exceptions=False) as client:
        yield Served(client, minds)
    minds.close(10)
