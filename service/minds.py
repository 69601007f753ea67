"""The served minds: each home's application, warm, with its token and its turn lock.

Every front-end of the server (the /v1 routes, the OpenAI endpoint, MCP, the web page) calls
these methods; each is blocking (call it from a worker thread) and returns exactly what the
command line's `--json` prints, built by the same functions the CLI uses.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindledger.compose import Home
from mindledger.domain.errors import MindError

if TYPE_CHECKING:
    from mindledger.domain.model_port import CompletionModel
    from mindledger.domain.turns import TurnOutcome, TurnService
    from mindledger.rules import AsOf

DEFAULT_BUDGET = 2000


# The key sent with a turn whose `api_base` a client chose: the home's provider keys (in the
# server's environment or settings) go only to the base URL the home's settings name, never to
# one a token holder supplies (the token opens a mind; it does not hand out the owner's keys).
CLIENT_BASE_KEY = "none"


def withhold_keys(model: Any) -> None:
    """Make a LiteLLM model send a placeholder key instead of any stored one."""
    from mindledger.adapters.litellm_model import LiteLLMModel

    if isinstance(model, LiteLLMModel):
        model.settings.api_key = CLIENT_BASE_KEY


class MindNameClashError(MindError):
    """Raised when two served homes hold minds with the same name."""


@dataclass(frozen=True)
class TurnDone:
    """A finished turn: the use case's outcome and the object `mind turn --json` prints."""

    outcome: TurnOutcome
    data: dict[str, Any]


class ServedMind:
    """One home served: its name (the identity's), token, warm turn pipeline and the lock
    that serializes its turns inside this server (other processes are handled by the
    application's conflict retries)."""

    def __init__(self, home: Home, token: str) -> None:
        from mindledger.safe_text import configured_secrets

        home.require()
        self.home, self.token = home, token
        self.name = self._identity_name()
        self.turn_lock = threading.Lock()
        self.secrets = configured_secrets(home.path)
        self._service: TurnService | None = None
        self._models: dict[tuple[str, str | None], CompletionModel] = {}

    def _identity_name(self) -> str:
        from mindledger.compose import open_mind

        mind = open_mind(self.home)
        try:
            return mind.identity().name
        finally:
            mind.close()

    # -- writes ------------------------------------------------------------------------------

    def turn(
        self,
        text: str,
        *,
        model: str | None = None,
        mock_reply: str | None = None,
        api_base: str | None = None,
        budget: int = DEFAULT_BUDGET,
        on_delta: Callable[[str], None] | None = None,
    ) -> TurnDone:
        """Run one turn (serialized with this mind's other turns in this server) and return
        it. `on_delta` receives the visible reply as it comes (the model streams; control lines
        are never in it; the pieces add up to the recorded reply, all heard before it is
        recorded; a callback that raises stops hearing, the turn goes on)."""
        from mindledger.cli.turn_cmds import outcome_json
        from mindledger.compose import asker
        from mindledger.domain.errors import InvalidInputError

        if budget < 200:
            raise InvalidInputError(f"budget {budget} is too small; give at least 200 tokens")
        if model == "mock" and mock_reply is None:  # in the request's words, not the CLI's flags
            raise InvalidInputError('model "mock" needs "mock_reply" (the reply text to script)')
        with self.turn_lock:
            completion_model = self._model(model, mock_reply, api_base)
            service = self._turns()
            try:
                # The same routing as `mind turn`: reusable knowledge answers without the model.
                outcome = asker(self.home, service, semantic=False).turn(
                    text, lambda: completion_model, budget=budget, on_reply=on_delta
                )
            except BaseException:
                self._drop_turns()  # a fresh pipeline next time, in case this one broke
                raise
            data = outcome_json(self.home, outcome)
        self.name = data["identity"]["name"] or self.name  # a turn may rename the mind
        return TurnDone(outcome, data)

    def ask(
        self,
        question: str,
        *,
        current: bool = False,
        model: str | None = None,
        mock_reply: str | None = None,
        api_base: str | None = None,
        budget: int = DEFAULT_BUDGET,
    ) -> Any:
        """`mind ask --json`: reusable knowledge answers without the model, else a turn whose
        answer is kept as unverified knowledge (serialized with this mind's turns)."""
        from mindledger.cli.knowledge_cmds import ask_json
        from mindledger.compose import asker
        from mindledger.domain.errors import InvalidInputError

        if budget < 200:
            raise InvalidInputError(f"budget {budget} is too small; give at least 200 tokens")
        with self.turn_lock:
            service = self._turns()
            try:
                outcome = asker(self.home, service).ask(
                    question, lambda: self._model(model, mock_reply, api_base), current, budget
                )
            except BaseException:
                self._drop_turns()
                raise
        return ask_json(outcome)

    def forget(self, kind: str, value: str, dry_run: bool) -> Any:
        """`mind forget --json`: this server's warm turn pipeline and model clients (which may
        hold the words in memory) are dropped first, under the turn lock."""
        from mindledger.forget import forget_data, selector_of

        selector = selector_of(kind, value)
        with self.turn_lock:
            if not dry_run:
                self._drop_turns()
                self._models.clear()
            return forget_data(self.home, selector, dry_run=dry_run, via="server")

    def owner_write(self, act: Callable[[Home], Any]) -> Any:
        """Run one owner action on the knowledge (the token is the owner), serialized with
        this mind's turns in this server, and return what it returns."""
        with self.turn_lock:
            return act(self.home)

    def _model(self, spec: str | None, mock_reply: str | None, api_base: str | None) -> Any:
        from mindledger.cli.turn_cmds import turn_model

        if mock_reply is not None:  # scripted: cheap, and never shared between requests
            return turn_model(self.home, spec, mock_reply, api_base)
        key = (spec or "", api_base)
        if key not in self._models:  # the embedded model's client stays warm between turns
            model = turn_model(self.home, spec, None, api_base)
            if api_base is not None and not self._configured_base(api_base):
                withhold_keys(model)
            self._models[key] = model
        return self._models[key]

    def _configured_base(self, api_base: str) -> bool:
        configured = self.home.settings.api_base
        return configured is not None and configured.rstrip("/") == api_base.rstrip("/")

    def _turns(self) -> TurnService:
        from mindledger.compose import turn_service

        if self._service is None:
            self._service = turn_service(self.home)
        return self._service

    def _drop_turns(self) -> None:
        if self._service is not None:
            service, self._service = self._service, None
            service.close()

    # -- reads (each opens its own read-only session: they run concurrently) ----------------

    def recall(self, query: str, budget: int = DEFAULT_BUDGET, as_of: AsOf | None = None) -> Any:
        """`mind recall --json`."""
        from mindledger.cli.recall_cmds import recall_data

        return recall_data(self.home, query, budget, as_of)

    def commitments(self, include_closed: bool = False) -> Any:
        """`mind commitments [--all] --json`."""
        from mindledger.compose import read_model
        from mindledger.projections.queries import listings

        with read_model(self.home) as con:
            return listings.commitments(con, include_closed)

    def threads(self, include_resolved: bool = False, as_of: AsOf | None = None) -> Any:
        """`mind threads [--all] --json`."""
        from mindledger.cli.thread_cmds import thread_listing

        return thread_listing(self.home, include_resolved, as_of)[0]

    def concepts(self) -> Any:
        """`mind concepts --json`."""
        from mindledger.compose import read_model
        from mindledger.projections.queries import listings

        with read_model(self.home) as con:
            return listings.concepts(con)

    def identity(self) -> Any:
        """`mind identity --json`."""
        from mindledger.compose import read_model
        from mindledger.projections.queries import listings

        with read_model(self.home) as con:
            return listings.identity(con)

    def status(self) -> Any:
        """`mind status --json`."""
        from mindledger.cli.ledger_cmds import status_data

        return status_data(self.home)

    def log(self, limit: int = 20, kind: str | None = None) -> Any:
        """`mind log [--limit N] [--kind K] --json`."""
        from mindledger.cli.ledger_cmds import log_events

        return log_events(self.home, limit, kind)

    def turn_prompt(self, ref: str) -> Any:
        """`mind log --turn REF --json`: what the model was sent in that turn."""
        from mindledger.cli.turn_prompt import resolve_turn, turn_prompt

        return turn_prompt(self.home, resolve_turn(self.home, ref))

    def verify(self) -> Any:
        """`mind verify --json`."""
        from mindledger.cli.ledger_cmds import verify_json

        return verify_json(self.home)

    def query(self, sql: str, params: dict[str, str] | None = None) -> Any:
        """`mind query SQL --json`: the same sandbox and limits."""
        from mindledger.cli.query_cmds import query_records

        return query_records(self.home, sql, params or {})

    def events_after(self, position: int, limit: int = 500) -> list[dict[str, Any]]:
        """The ledger's events after `position` (at most `limit`), each as `mind log --json`
        shows one."""
        from mindledger.cli.ledger_cmds import opened_events
        from mindledger.compose import open_reader

        reader = open_reader(self.home)
        try:
            rows = []
            for row in reader.rows(after=position, batch=limit):
                rows.append(row)
                if len(rows) >= limit:
                    break
            return opened_events(reader, rows)
        finally:
            reader.close()

    def warm(self) -> None:
        """Open what the first request would: the turn pipeline and a read session."""
        with self.turn_lock:
            self._turns()
        self.status()

    def close(self) -> None:
        """Release the ledger and read-model connections."""
        with self.turn_lock:
            self._drop_turns()


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
        self.turn_pool = ThreadPoolExecutor(turn_workers, thread_name_prefix="mind-turn")

    @classmethod
    def open(cls, homes: list[Home]) -> Minds:
        """Serve these homes (each must hold a mind); their tokens are made on first use."""
        from mindledger.service.auth import ensure_token

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

    def close(self, wait_s: float) -> bool:
        """Stop taking turns and wait up to `wait_s` for those running; False when some are
        still running (left to the unfinished-turn recovery of the next writer)."""
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
