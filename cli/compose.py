"""The composition root: builds the application, readers and projector from one home folder."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from domain.application import Mind
from domain.clock import Clock, fixed_clock, parse_time, system_clock
from domain.errors import MindError, NotInitialisedError


def default_home() -> Path:
    """`$MIND_HOME`, else the per-user data directory."""
    if os.environ.get("MIND_HOME"):
        return Path(os.environ["MIND_HOME"]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "mindledger"


def clock_from_env() -> Clock:
    """MIND_NOW (ISO-8601, UTC) when set, else the system clock."""
    now = os.environ.get("MIND_NOW", "").strip()
    return fixed_clock(parse_time(now)) if now else system_clock


@dataclass(frozen=True)
class Home:
    """Every path of one mind comes from here."""

    path: Path

    @property
    def ledger(self) -> Path:
        return self.path / "ledger.sqlite"

    @property
    def config_file(self) -> Path:
        return self.path / "config.json"

    @property
    def readmodel(self) -> Path:
        return self.path / "readmodel.duckdb"

    @property
    def published(self) -> Path:
        return self.path / "readmodel.published.duckdb"

    @property
    def projector_lock(self) -> Path:
        return self.path / "projector.lock"

    def config(self) -> dict[str, Any]:
        """The home's config.json (empty when absent)."""
        if not self.config_file.exists():
            return {}
        try:
            loaded: dict[str, Any] = json.loads(self.config_file.read_text())
        except (OSError, ValueError) as e:
            raise MindError(f"{self.config_file} is not valid JSON ({e}); fix or remove it") from e
        return loaded

    def backend(self) -> str:
        """`sqlite` (default) or `postgres` (config `backend`, or MIND_BACKEND)."""
        return os.environ.get("MIND_BACKEND") or str(self.config().get("backend", "sqlite"))

    def exists(self) -> bool:
        """Whether a ledger has been created here."""
        if self.backend() == "postgres":
            return self.config_file.exists() or bool(os.environ.get("MIND_POSTGRES_DSN"))
        return self.ledger.exists()

    def require(self) -> None:
        """Raise NotInitialisedError when there is no mind here."""
        if self.path.exists() and not self.path.is_dir():
            raise NotInitialisedError(
                f"{self.path} is a file, not a mind's folder; point --home (or MIND_HOME) "
                "at a folder"
            )
        if not self.exists():
            raise NotInitialisedError(f"no mind at {self.path}; run `mind init` first")


def persistence_env(home: Home, *, create: bool = False) -> dict[str, str]:
    """The eventsourcing settings for this home's backend.

    Tables are created only by `init`: a CREATE in every process would take SQLite's write
    lock after a read and fail at once (SQLITE_BUSY_SNAPSHOT) when another process is writing.
    """
    env = _backend_env(home)
    env["CREATE_TABLE"] = "y" if create else "n"
    return env


def _backend_env(home: Home) -> dict[str, str]:
    if home.backend() == "postgres":
        from adapters.postgres_ledger import postgres_env

        config = home.config()
        dsn = os.environ.get("MIND_POSTGRES_DSN") or str(config.get("postgres_dsn", ""))
        schema = os.environ.get("MIND_POSTGRES_SCHEMA") or str(config.get("postgres_schema", ""))
        return dict(postgres_env(dsn, schema))
    from adapters.ledger_location import sqlite_location

    return {
        "PERSISTENCE_MODULE": "adapters.sqlite_ledger:LedgerSQLiteFactory",
        "SQLITE_DBNAME": sqlite_location(home.ledger),  # read-only in a read-only home
        "SQLITE_LOCK_TIMEOUT": os.environ.get("MIND_LOCK_TIMEOUT", "15"),
    }


def open_mind(home: Home, *, create: bool = False) -> Mind:
    """The application over this home's ledger."""
    if not create:
        home.require()
    home.path.mkdir(parents=True, exist_ok=True)
    return Mind(env=persistence_env(home, create=create), clock=clock_from_env())


def open_reader(home: Home) -> Any:
    """A read-only view of the chain and events, for verify, log and projectors."""
    home.require()
    if home.backend() == "postgres":
        from adapters.postgres_ledger import PostgresLedgerReader

        return PostgresLedgerReader(persistence_env(home))
    from adapters.sqlite_ledger import SQLiteLedgerReader

    return SQLiteLedgerReader(home.ledger)


def read_model_paths(home: Home) -> Any:
    """Where this home's projector works and publishes."""
    from projections.readmodel import ReadModelPaths

    return ReadModelPaths(home.readmodel, home.published, home.projector_lock)


def read_model(home: Home) -> Any:
    """A read-only DuckDB connection that includes every event written before this call."""
    from projections.readmodel import open_read_model

    return _reading(home, open_read_model)


def sandboxed_read_model(home: Home) -> Any:
    """A read-only connection for user SQL: includes every event written before this call and
    can reach no other file."""
    from projections.readmodel import open_sandboxed

    return _reading(home, open_sandboxed)


@contextmanager
def _reading(home: Home, opener: Any) -> Iterator[Any]:
    """`opener`'s connection, with a ledger reader of its own that is closed afterwards."""
    reader = open_reader(home)
    try:
        with opener(read_model_paths(home), reader) as con:
            yield con
    finally:
        reader.close()


def load_dotenv(home: Home) -> None:
    """Put KEY=VALUE lines of MIND_HOME/.env into the environment (existing values win).

    Keys stay in the process: nothing of them goes into events or logs.
    """
    path = home.path / ".env"
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            os.environ.setdefault(key.strip(), value.strip().strip("\"'"))


def build_model(
    home: Home, spec: str, mock_reply: str | None = None, api_base: str | None = None
) -> Any:
    """A CompletionModel for a spec: `local/...` (the embedded model), `mock`, or any LiteLLM
    model string. Settings come from config.json `model_settings` and MIND_MODEL_* variables."""
    from adapters.litellm_model import LiteLLMModel, ModelSettings

    load_dotenv(home)
    config = home.config().get("model_settings", {})
    settings = ModelSettings(
        spec=spec,
        api_base=api_base or os.environ.get("MIND_API_BASE") or config.get("api_base"),
        timeout=float(os.environ.get("MIND_MODEL_TIMEOUT", config.get("timeout", 120))),
        retries=int(os.environ.get("MIND_MODEL_RETRIES", config.get("retries", 0))),
        fallbacks=list(config.get("fallbacks", [])),
        max_tokens=int(os.environ.get("MIND_MAX_TOKENS", config.get("max_tokens", 512))),
        mock_reply=mock_reply,
    )
    if mock_reply is None and spec.startswith("local/"):
        return LocalModel(home, settings)
    return LiteLLMModel(settings)


class LocalModel:
    """The embedded model: the loopback server, reached through the same LiteLLM adapter."""

    def __init__(self, home: Home, settings: Any) -> None:
        self.home, self.settings = home, settings

    @property
    def name(self) -> str:
        return str(self.settings.spec)

    def complete(self, messages: list[dict[str, Any]], on_token: Any = None) -> Any:
        from dataclasses import replace

        from adapters.litellm_model import LiteLLMModel
        from adapters.local_model import LocalModelServer

        base = LocalModelServer(self.home.path / "run").api_base()
        # A 135M model at temperature 0 easily loops until the token limit; llama.cpp's repeat
        # penalty keeps its answers short enough to finish.
        inner = LiteLLMModel(
            replace(
                self.settings,
                spec="openai/smollm2",
                api_base=base,
                extra_body={"repeat_penalty": 1.15},
            )
        )
        completion = inner.complete(messages, on_token)
        return replace(completion, model=self.name, provider="local")


def turn_service(home: Home) -> Any:
    """The turn pipeline over this home's ledger and read models."""
    import socket

    from cli.output import configured_secrets
    from domain.turns import TurnService
    from projections.turn_reads import ReadModelRetrieval, ReadModelThreads

    host = socket.gethostname()

    def is_dead(pid: int, on_host: str) -> bool:
        if on_host != host:
            return False  # cannot tell; leave it to a process on that host
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return pid == os.getpid()

    paths, reader = read_model_paths(home), open_reader(home)
    return TurnService(
        open_mind(home),
        ReadModelRetrieval(paths, reader),
        ReadModelThreads(paths, reader),
        os.getpid(),
        host,
        is_dead,
        workspace=lambda config: workspace(home, config),
        embedder=lambda config: embedder(home, config),
        secrets=configured_secrets(home.path),
    )


def embedder(home: Home, config: dict[str, str]) -> Any:
    """The embedding function for recall's vector channel, or None (`embedding.model` off)."""
    from domain.settings import EMBEDDING_API_BASE, EMBEDDING_MODEL

    model = config.get(EMBEDDING_MODEL, "off")
    if model == "off":
        return None
    from adapters.embeddings import LiteLLMEmbedder

    base = config.get(EMBEDDING_API_BASE, "off")
    return LiteLLMEmbedder(model, home.path / "embeddings.sqlite", None if base == "off" else base)


def workspace(home: Home, config: dict[str, str]) -> Any:
    """The mind's workspace (`mind config set workspace DIR`; default HOME/workspace), with the
    home's own files protected. `config`: the identity's settings."""
    from adapters.workspace import FileWorkspace
    from domain.settings import WORKSPACE

    configured = config.get(WORKSPACE)
    root = Path(configured) if configured else home.path / "workspace"
    if not configured:
        # The default folder, ready for work; a read-only home has none, and cites nothing.
        with contextlib.suppress(OSError):
            root.mkdir(parents=True, exist_ok=True)
    protected = (home.ledger, home.readmodel, home.published, home.config_file, home.path / "run")
    return FileWorkspace(root, protected)
