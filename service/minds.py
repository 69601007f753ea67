"""The served minds: each home's application, warm, with its token and its turn lock.

Every front-end of the server (the /v1 routes, the OpenAI endpoint, MCP, the web page) calls
these methods; each is blocking (call it from a worker thread) and returns exactly what the
command line's `--json` prints, built by the same functions the CLI uses.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mindledger.application import MindLedger, TurnDone
from mindledger.compose import Home
from mindledger.domain.errors import MindError

__all__ = ["Minds", "ServedMind", "TurnDone"]


class TurnPool(ThreadPoolExecutor):
    """Worker threads for turns that run each call in the context of the request that submitted
    it (as anyio's worker threads do), so that what the request hears (its warnings:
    `mindledger.notices.heard`) includes what its turn said."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)


class MindNameClashError(MindError):
    """Raised when two served homes hold minds with the same name."""


class ServedMind(MindLedger):
    """One home served: the floor's mind (`mindledger.MindLedger`), warm, with its name (the
    identity's) and its token. Its turns are serialized inside this server by the floor's
    write lock (other processes are handled by the application's conflict retries)."""

    def __init__(self, home: Home, token: str) -> None:
        from mindledger.safe_text import configured_secrets

        super().__init__(home)
        self.token = token
        self.secrets = configured_secrets(home.path)
        # A client-chosen api_base never receives the home's provider keys.
        self._withhold_client_keys = True
        self.via = "server"
        _ = self.name  # read once here: a mind is served under its name

    @property
    def turn_lock(self) -> Any:
        """The lock that serializes this mind's writes in this server (the floor's)."""
        return self.write_lock


class DivergingEnvironmentError(MindError):
    """Raised when served homes' .env files give one provider variable different values."""


def refuse_diverging_dotenv(homes: list[Home]) -> None:
    """One process has one environment: a provider line of a home's .env (OPENAI_API_KEY=...)
    is exported into it for LiteLLM, so two homes that set one name differently would share
    the first one's value. Refused, naming both files (the values are never shown)."""
    seen: dict[str, tuple[str, Path]] = {}
    for home in homes:
        loaded = home.loaded
        for name, value in loaded.dotenv.items():
            if name.upper().startswith("MIND_"):
                continue
            if name in seen and seen[name][0] != value:
                raise DivergingEnvironmentError(
                    f"{seen[name][1]} and {loaded.dotenv_path} set {name} differently, and one "
                    "server has one environment; serve these minds from separate servers"
                )
            seen.setdefault(name, (value, loaded.dotenv_path))


class Minds:
    """The minds one server serves, by name, and the worker threads their turns run in: a
    turn's thread is not cancelled when its client goes away, so a turn always finishes."""

    def __init__(self, minds: list[ServedMind], turn_workers: int = 16) -> None:
        seen: dict[str, ServedMind] = {}
        for m in minds:
            if m.name in seen:
                raise MindNameClashError(
                    f"two homes hold a mind called {m.name!r} ({seen[m.name].home.path} and "
                    f"{m.home.path}); serve them from separate servers"
                )
            seen[m.name] = m
        self._minds = list(minds)
        self.turn_pool = TurnPool(turn_workers, thread_name_prefix="mind-turn")

    @classmethod
    def open(cls, homes: list[Home]) -> Minds:
        """Serve these homes (each must hold a mind); their tokens are made on first use."""
        from mindledger.server_files import ensure_token

        refuse_diverging_dotenv(homes)
        return cls([ServedMind(h, ensure_token(h.path)) for h in homes])

    def __iter__(self) -> Iterator[ServedMind]:
        return iter(self._minds)

    def __len__(self) -> int:
        return len(self._minds)

    def names(self) -> list[str]:
        """The served minds' names."""
        return [m.name for m in self._minds]

    def get(self, name: str) -> ServedMind | None:
        """The mind called `name` (None when none is)."""
        return next((m for m in self._minds if m.name == name), None)

    def for_token(self, token: str) -> list[ServedMind]:
        """The minds this token opens (each compared in constant time)."""
        from mindledger.service.auth import same_token

        return [m for m in self._minds if same_token(token, m.token)]

    def interrupt_running(self, reason: str) -> list[str]:
        """Record as interrupted the turns of this process still running on each mind (a stop
        that cannot wait for their model); their ids. A mind whose ledger refuses the write
        keeps its turn `started`, for the next turn's recovery to mark."""
        from mindledger.service.errors import internal_error_message

        marked = []
        for m in self._minds:
            try:
                marked += m.interrupt_own_turns(reason)
            except Exception as e:  # the process boundary: the stop goes on for the others
                internal_error_message(e, m.secrets, m.home.path, "could not mark a turn")
        return marked

    def close(self, wait_s: float) -> bool:
        """Stop taking turns and wait up to `wait_s` for those running; False when some are
        still running (a stopping server then records them interrupted: `interrupt_running`)."""
        done = threading.Event()

        def drain() -> None:
            self.turn_pool.shutdown(wait=True)
            done.set()

        threading.Thread(target=drain, daemon=True).start()
        finished = done.wait(wait_s)
        if finished:
            for m in self._minds:
                m.close()
        return finished
