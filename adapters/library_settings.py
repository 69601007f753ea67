"""The eventsourcing settings a mind refuses at start, because honouring them would bypass or
weaken the hash chain or the sealing of events.

The library reads its settings from the process environment as well as from what the mind
passes (eventsourcing 9.5, `Application.construct_env`), and reads each one under the
application's name first (`MIND_CIPHER_TOPIC` before `CIPHER_TOPIC`: `utils.Environment.get`).
So a variable in the shell, or a line of the home's `.env` (exported for the model providers),
reaches the ledger's factory. The mind's own mapper and recorders do not apply these; rather than
ignore one in silence, the mind stops with one line naming it.

Allowed (ALLOWED below), because the library honours them without touching the chain or the
sealing. The settings the mind passes itself (OWN) win over the same names unprefixed.
"""

from __future__ import annotations

from collections.abc import Mapping

from mindledger.domain.errors import InvalidInputError

PREFIX = "MIND_"  # the application's name (`Mind.name`), upper-cased, as the library prefixes it

_SEALING = "events are sealed field by field with the mind's key store (MIND_MASTER_KEY)"
_JSON = "events are stored as the canonical JSON the hash chain covers"

REFUSED: dict[str, str] = {
    "POSTGRES_ENABLE_DB_FUNCTIONS": (
        "the library would insert events through its database function, which writes no hash chain"
    ),
    "ORIGINATOR_ID_TYPE": "the hash chain records UUID stream ids only",
    "CIPHER_TOPIC": f"{_SEALING}; the library's cipher would not be applied",
    "CIPHER_KEY": f"{_SEALING}; the library's cipher would not be applied",
    "COMPRESSOR_TOPIC": f"{_JSON}; the library's compressor would not be applied",
    "TRANSCODER_TOPIC": f"{_JSON}; the library's transcoder would not be applied",
    "MAPPER_TOPIC": f"{_SEALING}; the library's mapper would not be used",
    "APPLICATION_RECORDER_TOPIC": "only the mind's chained recorder may write the ledger",
    "IS_SNAPSHOTTING_ENABLED": (
        "snapshots would be stored outside the hash chain and read in place of its events"
    ),
    "POSTGRES_GET_PASSWORD_TOPIC": (
        "the PostgreSQL password comes from MIND_POSTGRES_DSN, which the ledger's readers and "
        "key store use too"
    ),
    # Ours, passed only when MIND_MASTER_KEY is set: from the shell it would seal with a key
    # the readers never get.
    "LEDGER_MASTER_KEY": "the master key is set as MIND_MASTER_KEY, which the readers use too",
}

# What the mind passes the library for every ledger (compose.persistence_env, postgres_env).
# Unprefixed in the environment they lose to ours; prefixed (MIND_SQLITE_DBNAME) the library
# would read them first, and write somewhere other than where verify and the readers look.
OWN = (
    "PERSISTENCE_MODULE",
    "INFRASTRUCTURE_FACTORY",  # the library's older names for PERSISTENCE_MODULE
    "FACTORY_TOPIC",
    "CREATE_TABLE",
    "SQLITE_DBNAME",
    "SQLITE_LOCK_TIMEOUT",
    "POSTGRES_DBNAME",
    "POSTGRES_HOST",
    "POSTGRES_PORT",
    "POSTGRES_USER",
    "POSTGRES_PASSWORD",
    "POSTGRES_LOCK_TIMEOUT",
    "POSTGRES_POOL_SIZE",
    "LEDGER_HEAD_ANCHOR",
    "LEDGER_KEY_STORE",
)
# The library honours these without touching the chain or the sealing: connection and pool
# tuning, the repository's cache, and the settings of tracking and process recorders, which a
# mind never builds (its read models keep their own positions in DuckDB).
ALLOWED = (
    "POSTGRES_CONNECT_TIMEOUT",
    "POSTGRES_CONN_MAX_AGE",
    "POSTGRES_PRE_PING",
    "POSTGRES_MAX_WAITING",
    "POSTGRES_MAX_OVERFLOW",
    "POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT",
    "AGGREGATE_CACHE_MAXSIZE",
    "AGGREGATE_CACHE_FASTFORWARD",
    "AGGREGATE_CACHE_FASTFORWARD_SKIPPING",
    "DEEPCOPY_FROM_AGGREGATE_CACHE",
    "SINGLE_ROW_TRACKING",
    "TRACKING_RECORDER_TOPIC",
    "PROCESS_RECORDER_TOPIC",
    "POSTGRES_SCHEMA",  # as MIND_POSTGRES_SCHEMA, the mind's own setting (postgres_env)
)
# MIND_POSTGRES_SCHEMA is the mind's own setting; postgres_env passes it under both names, so
# the value the settings chose (a flag, the environment, a file) is the one the library uses.


def refuse_library_settings(
    environ: Mapping[str, str], dotenv: Mapping[str, str] | None = None
) -> None:
    """Raise InvalidInputError naming the first variable in `environ`, then in `dotenv` (the
    home's .env lines, which the mind exports for the model providers, all but MIND_ ones, so
    the library reads them too), that would take the ledger out of the hash chain or the
    sealing; return when there is none."""
    for name in sorted(environ):
        bare = name.removeprefix(PREFIX)
        if bare in REFUSED:
            raise InvalidInputError(
                f"{name} is set: {REFUSED[bare]}; unset it (nothing was written)"
            )
        if name != bare and bare in OWN:
            raise InvalidInputError(
                f"{name} is set: the library would read it before the mind's own {bare}, and "
                f"write where verify and the readers do not look; unset it (nothing was written)"
            )
    for name in sorted(dotenv or {}):
        if name in REFUSED:
            raise InvalidInputError(
                f"{name} is set in the home's .env: {REFUSED[name]}; remove that line "
                "(nothing was written)"
            )


# Read by the library when `eventsourcing.domain` is imported (`os.getenv`, with no prefix), which
# the first command needing an aggregate does: a topic that did not resolve failed that import,
# "unexpected failure" in the middle of a turn, a log, a server's start. The mind stamps its own
# times (UTC, or MIND_NOW), so a topic that resolves to a time zone changes nothing and is allowed.
TZINFO_TOPIC = "TZINFO_TOPIC"


def refuse_unresolvable_tzinfo(
    environ: Mapping[str, str], dotenv: Mapping[str, str] | None = None
) -> None:
    """Raise InvalidInputError when TZINFO_TOPIC, in `environ` or the home's .env (exported for
    the model providers), names no time zone; return otherwise. Imports the topic's module, as
    the library would."""
    if TZINFO_TOPIC not in environ and TZINFO_TOPIC not in (dotenv or {}):
        return  # the usual case, and no import for it (every command reads its settings)
    from datetime import tzinfo

    from eventsourcing.utils import TopicError, resolve_topic

    for source, where, fix in (
        (environ, "", "unset it"),
        (dotenv or {}, " in the home's .env", "remove that line"),
    ):
        topic = source.get(TZINFO_TOPIC)
        if topic is None:
            continue
        try:
            found = resolve_topic(topic)
        except (TopicError, ValueError):  # ValueError: an empty module name
            found = None
        if not isinstance(found, tzinfo):
            raise InvalidInputError(
                f"{TZINFO_TOPIC} is set{where} to {topic!r}, which names no time zone (it takes "
                f"module:attribute of one, as datetime:timezone.utc); {fix} (nothing was written)"
            )
