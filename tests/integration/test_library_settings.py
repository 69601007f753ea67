"""eventsourcing settings that would bypass or weaken the hash chain or the sealing are refused at
start, in one line naming the variable, and nothing is written (the library reads them from the
process environment, under the mind's name too: MIND_CIPHER_TOPIC before CIPHER_TOPIC)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from uuid import uuid4

import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import Environment

from mindledger.adapters.library_settings import OWN, PREFIX, REFUSED
from mindledger.compose import Home, open_mind, open_reader
from mindledger.domain.errors import InvalidInputError
from tests.conftest import Result
from tests.integration.backends import BACKENDS, POSTGRES_DSN, backend_home, needs_postgres

# A value each variable could plausibly be given (the check refuses any value).
REFUSED_VALUES = {
    "POSTGRES_ENABLE_DB_FUNCTIONS": "y",
    "ORIGINATOR_ID_TYPE": "text",
    "CIPHER_TOPIC": "eventsourcing.cipher:AESCipher",
    "CIPHER_KEY": "bWluZGxlZGdlcm1pbmRsZWRnZXI=",
    "COMPRESSOR_TOPIC": "zlib",
    "TRANSCODER_TOPIC": "eventsourcing.persistence:JSONTranscoder",
    "MAPPER_TOPIC": "eventsourcing.persistence:Mapper",
    "APPLICATION_RECORDER_TOPIC": "eventsourcing.sqlite:SQLiteApplicationRecorder",
    "IS_SNAPSHOTTING_ENABLED": "y",
    "POSTGRES_GET_PASSWORD_TOPIC": "os:getcwd",
    "LEDGER_MASTER_KEY": "a" * 64,
    "MIND_CIPHER_TOPIC": "eventsourcing.cipher:AESCipher",
    "MIND_COMPRESSOR_TOPIC": "zlib",
    "MIND_POSTGRES_ENABLE_DB_FUNCTIONS": "y",
    "MIND_PERSISTENCE_MODULE": "eventsourcing.popo",
    "MIND_SQLITE_DBNAME": ":memory:",
    "MIND_CREATE_TABLE": "y",
    "MIND_LEDGER_KEY_STORE": "/tmp/elsewhere.sqlite",
}


def test_every_refused_setting_is_exercised() -> None:
    assert set(REFUSED) <= set(REFUSED_VALUES)
    assert all(n.removeprefix(PREFIX) in {*REFUSED, *OWN} for n in REFUSED_VALUES)


def event_rows(home: Path) -> tuple[int, int]:
    with sqlite3.connect(home / "ledger.sqlite") as conn:
        events = conn.execute("SELECT count(*) FROM stored_events").fetchone()[0]
        chain = conn.execute("SELECT count(*) FROM ledger_chain").fetchone()[0]
    return events, chain


def ledger_head(home: Home) -> tuple[int, str | None, str]:
    """(last position, its hash, the ledger's id)."""
    with closing(open_reader(home)) as reader:
        return (*reader.head(), reader.meta()[0])


def error_line(result: Result) -> str:
    lines = (result.stderr or result.output).strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("name", sorted(REFUSED_VALUES))
def test_a_command_that_writes_is_refused_in_one_line_naming_the_setting(
    name: str, home: Path, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("init").exit_code == 0
    before = event_rows(home)
    monkeypatch.setenv(name, REFUSED_VALUES[name])

    result = cli("commit", "Water the fern")

    assert result.exit_code != 0
    line = error_line(result)
    assert line.startswith(f"Error: {name} is set: ") and "unset it" in line
    assert event_rows(home) == before


def test_a_refused_setting_in_the_homes_dotenv_is_refused_too(
    home: Path, cli: Callable[..., Result]
) -> None:
    """The mind exports the .env's lines for the model providers, where the library reads them."""
    assert cli("init").exit_code == 0
    before = event_rows(home)
    (home / ".env").write_text("OPENAI_API_KEY=sk-test\nCOMPRESSOR_TOPIC=zlib\n")
    (home / ".env").chmod(0o600)  # as a private home keeps it (a loose one adds a warning line)

    result = cli("commit", "Water the fern")

    assert result.exit_code != 0
    assert error_line(result).startswith("Error: COMPRESSOR_TOPIC is set in the home's .env: ")
    assert event_rows(home) == before


@pytest.mark.parametrize("name", ["POSTGRES_ENABLE_DB_FUNCTIONS", "MIND_PERSISTENCE_MODULE"])
def test_init_is_refused_and_makes_no_home(
    name: str, home: Path, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, REFUSED_VALUES[name])

    result = cli("init")

    assert result.exit_code != 0
    assert error_line(result).startswith(f"Error: {name} is set: ")
    assert not home.exists()


def test_settings_the_library_honours_without_touching_the_chain_are_allowed(
    home: Path, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("init").exit_code == 0
    monkeypatch.setenv("AGGREGATE_CACHE_MAXSIZE", "10")
    monkeypatch.setenv("POSTGRES_CONNECT_TIMEOUT", "5")
    monkeypatch.setenv("MIND_POSTGRES_SCHEMA", "ignored_by_a_sqlite_mind")

    assert cli("commit", "Water the fern").exit_code == 0
    assert cli("verify").exit_code == 0


@pytest.mark.parametrize("topic", ["nonsense:utc", "", "os:path", "datetime:timezone.nothing"])
@pytest.mark.parametrize("command", [["commit", "Water the fern"], ["log"]])
def test_a_tzinfo_topic_that_names_no_time_zone_is_refused_in_one_line(
    topic: str,
    command: list[str],
    home: Path,
    cli: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The library resolves TZINFO_TOPIC when eventsourcing.domain is imported: in a fresh
    process that import failed inside the command ("unexpected failure")."""
    assert cli("init").exit_code == 0
    before = event_rows(home)
    monkeypatch.setenv("TZINFO_TOPIC", topic)

    result = cli(*command)

    assert result.exit_code != 0
    assert error_line(result) == (
        f"Error: TZINFO_TOPIC is set to {topic!r}, which names no time zone (it takes "
        "module:attribute of one, as datetime:timezone.utc); unset it (nothing was written)"
    )
    assert event_rows(home) == before


def test_a_tzinfo_topic_that_names_a_time_zone_is_allowed(
    home: Path, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("init").exit_code == 0
    monkeypatch.setenv("TZINFO_TOPIC", "datetime:timezone.utc")

    assert cli("commit", "Water the fern").exit_code == 0
    assert cli("verify").exit_code == 0


def test_a_tzinfo_topic_in_the_homes_dotenv_that_names_no_time_zone_is_refused(
    home: Path, cli: Callable[..., Result]
) -> None:
    assert cli("init").exit_code == 0
    (home / ".env").write_text("TZINFO_TOPIC=nonsense:utc\n")
    (home / ".env").chmod(0o600)

    result = cli("commit", "Water the fern")

    assert result.exit_code != 0
    assert error_line(result).startswith(
        "Error: TZINFO_TOPIC is set in the home's .env to 'nonsense:utc', which names no time zone"
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["POSTGRES_ENABLE_DB_FUNCTIONS", "ORIGINATOR_ID_TYPE"])
def test_opening_a_mind_is_refused_on_either_backend(
    backend: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MIND_BACKEND", raising=False)
    with backend_home(backend, tmp_path / "mind") as home:
        app = open_mind(home, create=True)
        app.init("Echo", ledger_head(home)[2])
        app.close()
        head = ledger_head(home)
        monkeypatch.setenv(name, REFUSED_VALUES[name])

        with pytest.raises(InvalidInputError, match=f"^{name} is set: "):
            open_mind(home)

        assert ledger_head(home) == head


@needs_postgres
def test_the_postgres_recorder_writes_the_chain_even_when_built_with_db_functions() -> None:
    """The check is the gate; the recorder does not rely on it: its append is its own."""
    from mindledger.adapters.postgres_ledger import (
        LedgerPostgresFactory,
        PostgresLedgerReader,
        postgres_env,
    )
    from mindledger.adapters.verification import verify_ledger
    from tests.integration.backends import postgres_schema

    with postgres_schema() as schema:
        env = {**postgres_env(POSTGRES_DSN, schema), "POSTGRES_ENABLE_DB_FUNCTIONS": "y"}
        factory = LedgerPostgresFactory(Environment("mind", env))  # tables named as a mind's
        recorder = factory.application_recorder()
        stream = uuid4()
        events = [StoredEvent(stream, v, "topic.Happened", b"{}") for v in (1, 2, 3)]

        ids = recorder.insert_events(events)

        reader = PostgresLedgerReader(postgres_env(POSTGRES_DSN, schema))
        result = verify_ledger(reader)
        reader.close()
        factory.close()
        assert ids is not None and len(ids) == 3
        assert (result.ok, result.events) == (True, 3)


@needs_postgres
def test_init_writes_the_schema_its_flag_names_over_mind_postgres_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library reads MIND_POSTGRES_SCHEMA before the POSTGRES_SCHEMA the mind passes; the
    mind passes both, so `--schema` is where the ledger goes, and where its readers look."""
    import psycopg

    from mindledger.init_mind import init_mind
    from tests.integration.backends import postgres_schema

    monkeypatch.delenv("MIND_BACKEND", raising=False)
    with postgres_schema() as flagged, postgres_schema() as from_environment:
        monkeypatch.setenv("MIND_POSTGRES_SCHEMA", from_environment)

        init_mind(Home(tmp_path / "mind"), "Echo", POSTGRES_DSN, flagged)

        with psycopg.connect(POSTGRES_DSN) as conn:
            tables = conn.execute(
                "SELECT table_schema FROM information_schema.tables WHERE table_name = %s",
                ("mind_events",),
            ).fetchall()
        assert (flagged,) in tables
        assert (from_environment,) not in tables
