"""The process's settings, each declared once with its type, default and help (a pydantic model).

Sources, highest first: a command-line flag, the environment (MIND_*), MIND_HOME/.env,
MIND_HOME/config.json, the default (read by mindledger/settings_sources.py, which keeps where
each value came from). Per-mind settings (threads.*, workspace, embedding.*) are events instead:
domain/settings.py.

To add a setting: one `setting(default, help, accepts, **constraints)` field on `Settings`. It is
then read from `MIND_<NAME>`, a `MIND_<NAME>=` line in MIND_HOME/.env and the config.json key
`<name>`, listed by `mind config show`, and refused in one line when bad; add a bad value for it
to BAD in tests/e2e/test_cli_settings.py (a test fails until you do).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from mindledger.domain.clock import parse_fixed_time
from mindledger.domain.errors import MindError


class SettingError(MindError):
    """Raised when a setting holds a value it does not accept, or a settings file is unreadable."""


def setting(default: Any, help: str, accepts: str, **constraints: Any) -> Any:
    """A field with its help (`config show`) and what it accepts (the error on a bad value)."""
    return Field(default, description=help, json_schema_extra={"accepts": accepts}, **constraints)


def accepts(name: str) -> str:
    """What a setting accepts, in words."""
    extra = FIELDS[name].json_schema_extra
    return str(extra["accepts"]) if isinstance(extra, dict) else ""


class Settings(BaseModel):
    """Every setting of the `mind` process (not of one mind: those are events)."""

    # A plain pydantic model, not pydantic-settings' BaseSettings: importing pydantic-settings
    # (asyncio, argparse, email, its CLI and cloud sources at module level) cost every command
    # more CPU than DuckDB, and we used none of it but the reading of MIND_* names, which
    # settings_sources.py does itself in a few lines (load_settings reads each source apart
    # anyway, to keep where each value came from). Still one typed model: name, type, default,
    # help, constraints.
    # Built on first validation: a home that sets nothing but itself (most) takes the
    # defaults as they are (`settings_sources.load_settings`), and building this model's
    # validator cost every such command ~2 ms of CPU.
    model_config = ConfigDict(extra="forbid", validate_default=True, defer_build=True)

    home: Path = setting(
        ...,
        "the mind's folder (--home, else MIND_HOME, else ~/.local/share/mindledger)",
        "a folder",
    )
    now: datetime | None = setting(
        None,
        "the time commands record, fixed (tick --now too); unset: the system clock",
        "an ISO-8601 UTC time in the years 1970 to 2999, like 2026-05-01T09:30:00Z",
    )
    allow_past_now: bool = setting(
        False, "let MIND_NOW be earlier than the ledger's latest event", "true or false"
    )
    backend: Literal["sqlite", "postgres"] = setting(
        "sqlite", "where the ledger is kept", "sqlite or postgres"
    )
    postgres_dsn: SecretStr | None = setting(
        None, "the PostgreSQL ledger's server", "a libpq DSN, postgresql://user:pw@host:port/db"
    )
    postgres_schema: str = setting(
        "",
        "the PostgreSQL schema of this mind (empty: public)",
        "an SQL identifier (letters, digits, _)",
        pattern=r"^([A-Za-z_][A-Za-z0-9_]{0,62})?$",
    )
    master_key: SecretStr | None = setting(
        None,
        "wraps the data keys in the key store: a copied ledger and key store are unreadable "
        "without it (keep it outside the home; it cannot be recovered)",
        "32 bytes in base64 or hex, e.g. from `openssl rand -base64 32`",
    )
    lock_timeout: float = setting(
        15.0,
        "seconds to wait for the ledger's write lock (rounded up to whole seconds)",
        "a number over 0, at most 3600 (a fraction is rounded up: the ledger takes whole seconds)",
        gt=0,
        le=3600,
    )
    api_base: str | None = setting(
        None, "the model server turns call (turn --api-base too)", "an http:// or https:// URL"
    )
    model_timeout: float = setting(
        120.0, "seconds to wait for a model reply", "a number over 0, at most 86400", gt=0, le=86400
    )
    model_retries: int = setting(
        0, "retries of a failed model call", "a whole number from 0 to 10", ge=0, le=10
    )
    max_tokens: int = setting(
        512,
        "the most tokens a reply may have",
        "a whole number from 1 to 1000000",
        ge=1,
        le=1_000_000,
    )
    model_fallbacks: list[str] = setting(
        [], "models to try when the first fails", "LiteLLM model names, comma-separated"
    )
    mock_reply: str | None = setting(
        None,
        "the `mock` model's scripted reply when a turn gives none (tests, demos: a front-end "
        "such as MCP offers agents no script)",
        "a text that is not blank, of at most 100,000 characters",
        pattern=r"\S",
        max_length=100_000,
    )
    query_timeout: float = setting(
        30.0,
        "seconds a `mind query` may run (query --timeout too)",
        "a finite number over 0, at most 86400",
        gt=0,
        le=86_400,
        allow_inf_nan=False,
    )
    query_max_rows: int = setting(
        100_000,
        "the most rows a `mind query` returns (query --max-rows too)",
        "a whole number of at least 1",
        ge=1,
    )
    query_max_bytes: int = setting(
        64 * 1024 * 1024,
        "the most bytes of values a `mind query` returns, counted as text (query --max-bytes too)",
        "a whole number of at least 1",
        ge=1,
    )

    @field_validator("now", mode="before")
    @classmethod
    def _fixed_time(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return parse_fixed_time(value)
            except MindError as e:  # keep the words "not ISO-8601" / "outside the years"
                raise ValueError(str(e).split(" is ", 1)[-1]) from None
        return value

    @field_validator("postgres_dsn", mode="before")
    @classmethod
    def _dsn(cls, value: Any) -> Any:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(text, str) and not re.match(r"^(postgres(ql)?://|\w+=)", text.strip()):
            raise ValueError("not a libpq DSN")  # the value itself may hold a password
        return value

    @field_validator("master_key", mode="before")
    @classmethod
    def _master(cls, value: Any) -> Any:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(text, str):  # the key store's module (cryptography) only for a key given
            from mindledger.adapters.key_store import KeyStoreError, parse_master_key

            try:
                parse_master_key(text)
            except KeyStoreError:
                raise ValueError("not 32 bytes in base64 or hex") from None  # never echo it
        return value

    @field_validator("api_base", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        if isinstance(value, str) and not re.match(r"^https?://[^\s/]+\S*$", value.strip()):
            if re.match(r"^https?://", value.strip(), re.IGNORECASE):
                raise ValueError("a URL with no host, or with a space in it")
            raise ValueError("not an http:// or https:// URL")
        return value.strip() if isinstance(value, str) else value

    @field_validator("model_fallbacks", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        names = [n.strip() for n in value.split(",")] if isinstance(value, str) else value
        if isinstance(names, list) and not all(isinstance(n, str) and n.strip() for n in names):
            raise ValueError("every fallback must be a non-empty model name")
        return names


FIELDS = Settings.model_fields


def env_name(name: str) -> str:
    """The environment variable (and .env line) that sets a field."""
    return f"MIND_{name.upper()}"


def shown_value(name: str, value: Any) -> Any:
    """A value as `config show` prints it: secrets masked, times and paths as text."""
    if isinstance(value, SecretStr):
        return mask_url(value.get_secret_value())
    if isinstance(value, datetime | Path):
        return str(value) if isinstance(value, Path) else value.isoformat()
    if name == "api_base" and isinstance(value, str):
        return mask_url(value)
    return value


def mask_url(text: str) -> str:
    """A URL or DSN with its password replaced by ****."""
    masked = re.sub(r"(://[^:/@\s]*:)[^@\s]*@", r"\1****@", text)
    return re.sub(r"(password=)\S*", r"\1****", masked)
