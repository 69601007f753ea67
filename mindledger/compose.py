"""The composition root: builds the application, readers and projector from one home folder.

Every factory takes a `Home`, whose typed settings (mindledger/settings.py) are read once, and
returns a typed object; nothing here connects or reads a file at import time.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindledger.domain.clock import (
    Clock,
    fixed_clock,
    no_earlier_than_head,
    parse_fixed_time,
    system_clock,
)
from mindledger.domain.errors import NotInitialisedError

if TYPE_CHECKING:
    import duckdb

    from mindledger.adapters.embeddings import LiteLLMEmbedder
    from mindledger.adapters.key_store import KeyStore
    from mindledger.adapters.postgres_ledger import PostgresLedgerReader
    from mindledger.adapters.sqlite_reader import SQLiteLedgerReader
    from mindledger.adapters.vector_store import StoredVectors
    from mindledger.adapters.workspace import FileWorkspace
    from mindledger.domain.application import Mind
    from mindledger.domain.identity import Identity
    from mindledger.domain.knowledge_ask import Asker
    from mindledger.domain.knowledge_port import Similar
    from mindledger.domain.model_port import CompletionModel
    from mindledger.domain.text_keys import TextKeys
    from mindledger.domain.turns import TurnService
    from mindledger.projections.engine.readmodel import ReadModelPaths
    from mindledger.settings import Settings
    from mindledger.settings_sources import LoadedSettings, Origin

    LedgerReader = SQLiteLedgerReader | PostgresLedgerReader


def default_home() -> Path:
    """`$MIND_HOME`, else the per-user data directory."""
    if os.environ.get("MIND_HOME"):
        return Path(os.environ["MIND_HOME"]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "mindledger"


def clock_from_env() -> Clock:
    """MIND_NOW when set (validated at start-up like every setting), else the system clock.

    For reading "now" (tension, recall); what the application records goes through
    `Home.clock`, which also refuses a time before the ledger's head."""
    now = os.environ.get("MIND_NOW", "").strip()
    return fixed_clock(parse_fixed_time(now)) if now else system_clock


@dataclass(frozen=True)
class Home:
    """Every path of one mind comes from here, and so do the process's settings.

    `flags`: setting -> (name, value) given by the caller: a command-line flag (`--home`) or a
    floor argument by its request word (`` `api_base` ``, `` `now` ``); they win over every
    other source."""

    path: Path
    flags: dict[str, tuple[str, Any]] = field(default_factory=dict, compare=False)

    @classmethod
    def from_option(cls, option: Path | None, name: str = "`home`") -> Home:
        """The home `option` names (given as `name`: the command line's `--home`, a floor
        argument's `home`), else MIND_HOME, else the per-user data directory."""
        if option is not None:
            return cls(option, {"home": (name, option)})
        return cls(default_home())

    def with_flags(self, **flags: tuple[str, Any]) -> Home:
        """This home with more command-line flags (a flag given as None is not given)."""
        given = {k: v for k, v in flags.items() if v[1] is not None}
        return replace(self, flags={**self.flags, **given}) if given else self

    @cached_property
    def loaded(self) -> LoadedSettings:
        """The settings with where each came from; raises SettingError on a bad value."""
        from mindledger.adapters.library_settings import refuse_unresolvable_tzinfo
        from mindledger.settings_sources import Origin, load_settings

        origin = self._home_origin(Origin)
        loaded = load_settings(self.path, origin, self.flags)
        refuse_unresolvable_tzinfo(os.environ, loaded.dotenv)  # before the library's import
        return loaded

    def _home_origin(self, origin: type[Origin]) -> Origin:
        if "home" in self.flags:
            name = self.flags["home"][0]
            return origin("flag" if name.startswith("-") else "argument", name)
        if os.environ.get("MIND_HOME"):
            return origin("environment", "MIND_HOME")
        return origin("default", "MIND_HOME")

    @property
    def settings(self) -> Settings:
        """The typed settings (flag > environment > .env > config.json > default)."""
        return self.loaded.values

    @property
    def ledger(self) -> Path:
        return self.path / "ledger.sqlite"

    @property
    def key_store(self) -> Path:
        return self.path / "keys.sqlite"

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
    def head_anchor(self) -> Path:
        return self.path / "ledger-head.json"

    @property
    def projector_lock(self) -> Path:
        return self.path / "projector.lock"

    def config(self) -> dict[str, Any]:
        """The home's config.json as written (empty when absent; an object, else SettingError)."""
        from mindledger.settings_sources import read_config_file

        return read_config_file(self.config_file)

    def backend(self) -> str:
        """`sqlite` (default) or `postgres` (MIND_BACKEND, .env or config.json `backend`)."""
        return self.settings.backend

    def exists(self) -> bool:
        """Whether a ledger has been created here."""
        if self.backend() == "postgres":
            return self.config_file.exists() or self.settings.postgres_dsn is not None
        return self.ledger.exists()

    def require(self) -> None:
        """Raise NotInitialisedError when there is no mind here."""
        if self.path.exists() and not self.path.is_dir():
            raise NotInitialisedError(
                f"{self.path} is a file, not a mind's folder; point `home` (or MIND_HOME) "
                "at a folder"
            )
        if not self.exists():
            raise NotInitialisedError(f"no mind at {self.path}; run `mind init` first")
        from mindledger.home_modes import warn_if_shared

        warn_if_shared(self.path)

    def clock(self) -> Clock:
        """The clock the application records with: MIND_NOW (or --now) when set, refused when
        earlier than the ledger's latest event unless MIND_ALLOW_PAST_NOW; else the system's."""
        settings = self.settings
        if settings.now is None:
            return system_clock
        if settings.allow_past_now:
            return fixed_clock(settings.now)
        name = self.loaded.origins["now"].name
        allow = "set MIND_ALLOW_PAST_NOW=1 to record in the past anyway"
        return no_earlier_than_head(settings.now, lambda: head_time(self), name, allow)


def head_time(home: Home) -> datetime | None:
    """When the ledger's latest event happened (None for an empty or absent ledger)."""
    import json

    if not home.exists():
        return None
    reader = open_reader(home)
    try:
        rows = reader.tail(1)
    finally:
        reader.close()
    if not rows or rows[-1].state is None:
        return None
    try:
        return datetime.fromisoformat(json.loads(rows[-1].state)["timestamp"])
    except (ValueError, KeyError, TypeError):
        # The chain verifies (`mind verify` passes); it is the event this mindledger cannot
        # read, and the projector stops at it too: refused as the append guard refuses.
        from mindledger.projections.engine.projector import ProjectionError

        position = rows[-1].position
        raise ProjectionError(
            f"the ledger's latest event (position {position}) has no readable timestamp, so "
            "this mindledger cannot record after it and nothing was written",
            position,
        ) from None


def persistence_env(home: Home, *, create: bool = False) -> dict[str, str]:
    """The eventsourcing settings for this home's backend.

    Tables are created only by `init`: a CREATE in every process would take SQLite's write
    lock after a read and fail at once (SQLITE_BUSY_SNAPSHOT) when another process is writing.
    """
    from mindledger.adapters.head_anchor import HEAD_ANCHOR_ENV
    from mindledger.adapters.key_store import KEY_STORE_ENV, MASTER_KEY_ENV

    env = _backend_env(home)
    env["CREATE_TABLE"] = "y" if create else "n"
    env[HEAD_ANCHOR_ENV] = str(home.head_anchor)  # every writer records the head it made
    if home.backend() == "postgres":
        env[KEY_STORE_ENV] = "postgres"
    else:  # a ledger opened read-only (a read-only home) reads its keys read-only too
        read_only = env["SQLITE_DBNAME"].startswith("file:")
        env[KEY_STORE_ENV] = ("ro:" if read_only else "") + str(home.key_store)
    master = home.settings.master_key
    if master is not None:
        env[MASTER_KEY_ENV] = master.get_secret_value()
    return env


def open_keys(home: Home, *, read_only: bool = True) -> KeyStore:
    """This home's key store (read-only by default: readers only open sealed fields)."""
    from mindledger.adapters.key_store import SQLiteKeyStore, parse_master_key

    master_key = home.settings.master_key
    master = parse_master_key(master_key.get_secret_value()) if master_key else None
    if home.backend() == "postgres":
        from mindledger.adapters.postgres_keys import PostgresKeyStore

        return PostgresKeyStore(_backend_env(home), master)
    return SQLiteKeyStore(home.key_store, master, read_only=read_only)


def _backend_env(home: Home) -> dict[str, str]:
    settings = home.settings
    # eventsourcing reads SQLITE_/POSTGRES_LOCK_TIMEOUT with int(): whole seconds, rounded up
    # so a short wait (0.1) stays a wait, never 0 (which it would take as "the default").
    lock_timeout = str(math.ceil(settings.lock_timeout))
    if settings.backend == "postgres":
        from mindledger.adapters.postgres_ledger import postgres_env

        dsn = settings.postgres_dsn.get_secret_value() if settings.postgres_dsn else ""
        env = dict(postgres_env(dsn, settings.postgres_schema))
        env["POSTGRES_LOCK_TIMEOUT"] = lock_timeout
        return env
    from mindledger.adapters.ledger_location import sqlite_location

    return {
        "PERSISTENCE_MODULE": "mindledger.adapters.sqlite_ledger:LedgerSQLiteFactory",
        "SQLITE_DBNAME": sqlite_location(home.ledger),  # read-only in a read-only home
        "SQLITE_LOCK_TIMEOUT": lock_timeout,
    }


def finish_forgets(home: Home) -> None:
    """A forget a crash interrupted is finished before anything reads or writes (one stat)."""
    if (home.path / "forget.pending").exists():
        from mindledger.forget import finish_pending

        finish_pending(home)


# What a front-end's command opened, closed when the command ends (the CLI sets one per command).
command_scope: ContextVar[ExitStack | None] = ContextVar("command_scope", default=None)


def open_mind(home: Home, *, create: bool = False, guarded: bool = True) -> Mind:
    """The application over this home's ledger; it appends only while the read model can be
    brought up to date (`append_guard`; a new ledger, or `guarded` False, has nothing to
    check)."""
    from mindledger.adapters.library_settings import refuse_library_settings
    from mindledger.append_guard import GuardedMind
    from mindledger.domain.application import Mind

    if not create:
        home.require()
        finish_forgets(home)
    refuse_library_settings(os.environ, home.loaded.dotenv)  # before anything is made
    if create:
        make_private_home(home)
    env, clock = persistence_env(home, create=create), home.clock()
    app = Mind(env=env, clock=clock) if create or not guarded else GuardedMind(home, env, clock)
    # A command's mind is closed when the command ends (its ledger and key-store connections
    # released then, not whenever the collector reaches them); a server's outlive any command.
    scope = command_scope.get()
    if scope is not None:
        scope.callback(app.close)
    return app


def make_private_home(home: Home) -> None:
    """The home folder made 0700 and, for SQLite, the ledger file 0600 before the library opens
    it (its journals take its mode). A folder made by hand is tightened only while it holds
    nothing of anyone's but the settings files a mind reads."""
    from mindledger.domain.private_files import FOLDER_MODE, create_private_file, private_folder

    settings_only = {".env", "config.json"}
    if (
        home.path.is_dir()
        and home.path.stat().st_uid == os.getuid()
        and {p.name for p in home.path.iterdir()} <= settings_only
    ):
        home.path.chmod(FOLDER_MODE)
    private_folder(home.path)
    if home.backend() != "postgres":
        create_private_file(home.ledger)


def identity_of(home: Home) -> Identity:
    """The mind's identity as the ledger holds it now (the application opened and closed)."""
    app = open_mind(home)
    try:
        return app.identity()
    finally:
        app.close()


def open_reader(home: Home, hidden: Collection[bytes] = (), *, sealed: bool = True) -> LedgerReader:
    """A read-only view of the chain and events, for verify, log and projectors; the keys in
    `hidden` read as destroyed (a forget's read model built aside). `sealed` False: no key
    store (a reader of the chain and the clear fields only, such as `status`'s)."""
    home.require()
    if not sealed:
        return _reader(home, None)
    keys = open_keys(home)
    if hidden:
        from mindledger.adapters.masked_keys import MaskedKeys

        keys = MaskedKeys(keys, hidden)
    try:
        return _reader(home, keys)
    except BaseException:
        keys.close()
        raise


def _reader(home: Home, keys: KeyStore | None) -> LedgerReader:
    if home.backend() == "postgres":
        from mindledger.adapters.postgres_ledger import PostgresLedgerReader

        return PostgresLedgerReader(persistence_env(home), keys)
    from mindledger.adapters.sqlite_reader import SQLiteLedgerReader

    return SQLiteLedgerReader(home.ledger, keys)


def read_model_paths(home: Home) -> ReadModelPaths:
    """Where this home's projector works and publishes."""
    from mindledger.projections.engine.readmodel import ReadModelPaths

    return ReadModelPaths(home.readmodel, home.published, home.projector_lock)


Connection = AbstractContextManager["duckdb.DuckDBPyConnection"]
Opener = Callable[["ReadModelPaths", "LedgerReader"], Connection]


def read_model(home: Home) -> Connection:
    """A read-only DuckDB connection that includes every event written before this call."""
    from mindledger.projections.engine.readmodel import open_read_model

    return _reading(home, open_read_model)


def sandboxed_read_model(home: Home) -> Connection:
    """A read-only connection for user SQL: includes every event written before this call and
    can reach no other file."""
    from mindledger.projections.engine.readmodel import open_sandboxed

    return _reading(home, open_sandboxed)


@contextmanager
def _reading(home: Home, opener: Opener) -> Iterator[duckdb.DuckDBPyConnection]:
    """`opener`'s connection, with a ledger reader of its own that is closed afterwards."""
    finish_forgets(home)
    reader = open_reader(home)
    try:
        with opener(read_model_paths(home), reader) as con:
            yield con
    finally:
        reader.close()


def load_dotenv(home: Home) -> None:
    """Put the provider lines of MIND_HOME/.env (OPENAI_API_KEY=...) into the environment for
    LiteLLM; values already in the environment win. MIND_* lines are settings, read as such."""
    from mindledger.provider_env import export_dotenv

    export_dotenv(home.loaded)


def build_model(
    home: Home, spec: str, mock_reply: str | None = None, api_base: str | None = None
) -> CompletionModel:
    """A CompletionModel for a spec: `local/...` (the embedded model), `mock`, or any LiteLLM
    model string. `api_base`: the --api-base flag; the rest comes from the settings."""
    from mindledger.models import build

    return build(home, spec, mock_reply, api_base)


def turn_service(home: Home) -> TurnService:
    """The turn pipeline over this home's ledger and read models."""
    import socket

    from mindledger.domain.turns import TurnService
    from mindledger.projections.retrieval.turn_reads import ReadModelRetrieval, ReadModelThreads
    from mindledger.safe_text import configured_secrets

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


@contextmanager
def turn_session(home: Home) -> Iterator[TurnService]:
    """`turn_service` for one turn in this process, which a forget waits for and which waits
    for a forget (`mindledger.forget.forget_excluded`; taken once the service is open, since opening
    may finish a forget a crash interrupted)."""
    from mindledger.forget_lock import forget_excluded

    with turn_service(home) as service, forget_excluded(home):
        yield service


def embedder(home: Home, config: dict[str, str]) -> StoredVectors | None:
    """Recall's vectors (`adapters.vector_store.StoredVectors`: the stored items' as the vector
    projection computed them, the query's embedded at each call), or None: `embedding.recall`
    or `embedding.model` off, the offline model missing (one warning), or nothing embedded
    yet (then no query is embedded, and numpy is not imported)."""
    from mindledger.adapters.vector_store import FILE, tracked_at
    from mindledger.domain.settings import (
        DEFAULT_EMBEDDING_MODEL,
        DEFAULT_EMBEDDING_RECALL,
        EMBEDDING_MODEL,
        EMBEDDING_RECALL,
    )
    from mindledger.offline_embedder import LOCAL_PREFIX, offline_embedder_missing

    if config.get(EMBEDDING_RECALL, DEFAULT_EMBEDDING_RECALL) != "on":
        return None
    model = config.get(EMBEDDING_MODEL, DEFAULT_EMBEDDING_MODEL)
    if model == "off":
        return None
    found, position = tracked_at(home.path / FILE)
    if found != model or position == 0:
        offline_embedder_missing(model)  # its one warning when the vectors will not come
        return None
    from mindledger.adapters.vector_store import StoredVectors

    if model.startswith(LOCAL_PREFIX):
        if offline_embedder_missing(model):
            return None
        from functools import partial

        from mindledger.adapters.embeddings import embed_matrix

        # Called here, no cache: a query's vector costs the model ~10 ms, and a cache file
        # opened, keyed and written per recall cost more than it saved.
        return StoredVectors(home.path / FILE, model, partial(embed_matrix, model))
    query = embedding_model(home, config)  # a provider's: cached, a repeated query is free
    return None if query is None else StoredVectors(home.path / FILE, model, query)


def embedding_model(home: Home, config: dict[str, str]) -> LiteLLMEmbedder | None:
    """The configured embedding model (`embedding.model`; the offline MiniLM by default), as
    a callable texts -> vectors cached in MIND_HOME/embeddings.sqlite; None when it is off
    (or is the offline model and its weights are not installed: one warning, then none).
    For semantic matching (projections.retrieval.vectors.nearest), whatever recall does."""
    from mindledger.domain.settings import (
        DEFAULT_EMBEDDING_MODEL,
        EMBEDDING_API_BASE,
        EMBEDDING_MODEL,
    )
    from mindledger.offline_embedder import offline_embedder_missing

    model = config.get(EMBEDDING_MODEL, DEFAULT_EMBEDDING_MODEL)
    if model == "off" or offline_embedder_missing(model):
        return None
    from mindledger.adapters.embeddings import LiteLLMEmbedder

    base = config.get(EMBEDDING_API_BASE, "off")
    return LiteLLMEmbedder(
        model,
        home.path / "embeddings.sqlite",
        home_text_keys(home),
        None if base == "off" else base,
    )


def home_text_keys(home: Home) -> TextKeys:
    """Keyed hashes under this home's secrets, for what keys text outside the ledger (the
    embeddings cache): each secret read from the key store once, made there on first use."""
    from mindledger.domain.text_keys import TextKeys

    return TextKeys(HomeSecrets(home))


class HomeSecrets:
    """A home's named secrets (`KeyStore.secret`): read read-only first, so a read-only home
    whose secret exists works; the store is opened for writing only to make a new one."""

    def __init__(self, home: Home) -> None:
        self.home = home

    def secret(self, name: str) -> bytes:
        from mindledger.adapters.key_store import KeyStoreError

        for read_only in (True, False):
            keys = open_keys(self.home, read_only=read_only)
            try:
                return keys.secret(name)
            except KeyStoreError:
                if not read_only:
                    raise
            finally:
                keys.close()
        raise AssertionError("unreachable")


class ReadModelKnowledge:
    """Semantic matching for asking: item questions from this home's read models, through the
    configured embedding model."""

    def __init__(self, home: Home, embed: LiteLLMEmbedder) -> None:
        self.home, self.embed = home, embed

    def similar(self, question: str, k: int) -> list[Similar]:
        """The `k` items whose questions are nearest `question`, best first."""
        from mindledger.projections.retrieval.knowledge_channel import similar_questions

        with read_model(self.home) as con:
            return similar_questions(con, self.embed, question, k)


@contextmanager
def asking(home: Home, service: TurnService) -> Iterator[Asker]:
    """`asker` with semantic matching, for one ask: its embedding cache is closed after it."""
    made = asker(home, service)
    try:
        yield made
    finally:
        if isinstance(made.reads, ReadModelKnowledge):
            made.reads.embed.close()


def asker(home: Home, service: TurnService, semantic: bool = True) -> Asker:
    """The ask use case over a turn service: semantic matching through the mind's embedding
    model (`embedding.model`), off when none is configured (or not wanted: a turn's routing
    is exact only)."""
    from mindledger.domain.knowledge_ask import Asker

    if not semantic:
        return Asker(service, None, off="exact-only")
    embed = embedding_model(home, service.mind.identity().config)
    return Asker(service, ReadModelKnowledge(home, embed) if embed is not None else None)


def workspace(home: Home, config: dict[str, str]) -> FileWorkspace:
    """The mind's workspace (`mind config set workspace DIR`; default HOME/workspace), with the
    home's own files protected. `config`: the identity's settings."""
    from mindledger.adapters.workspace import FileWorkspace
    from mindledger.domain.private_files import private_folder
    from mindledger.domain.settings import WORKSPACE

    configured = config.get(WORKSPACE)
    root = Path(configured) if configured else home.path / "workspace"
    if not configured:
        # The default folder, ready for work; a read-only home has none, and cites nothing.
        with contextlib.suppress(OSError):
            private_folder(root)
    protected = (
        home.ledger,
        home.readmodel,
        home.published,
        home.config_file,
        home.head_anchor,
        home.path / ".env",  # holds keys
        home.path / "run",
    )
    return FileWorkspace(root, protected)
