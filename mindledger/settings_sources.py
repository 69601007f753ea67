"""Reading the settings' sources, highest first: a command-line flag, the environment (MIND_*),
MIND_HOME/.env, MIND_HOME/config.json, the default.

Each source is read on its own (the environment, .env and config.json, here) so that every
value keeps where it came from: `mind config show` lists it, and a bad value is refused in one
line naming its source. MIND_* names are read as pydantic-settings read them (any case; an empty
value is as if unset; the text is validated by the `Settings` model), without importing it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from io import StringIO
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from mindledger.domain.settings import KEYS as MIND_KEYS
from mindledger.settings import FIELDS, SettingError, Settings, accepts, env_name

# Settings a home file may not set: the home itself, and the clock (a time fixed in a file
# would silently date every later event).
ENV_ONLY = {"home": "the home", "now": "the clock", "allow_past_now": "the clock"}
# config.json keys that predate the flat names (written as {"model_settings": {...}}).
LEGACY_MODEL_KEYS = {
    "api_base": "api_base",
    "timeout": "model_timeout",
    "retries": "model_retries",
    "max_tokens": "max_tokens",
    "fallbacks": "model_fallbacks",
}


class Origin(NamedTuple):
    """Where a value came from: the source, and the name it had there."""

    source: str  # flag, argument (a floor method's), environment, .env, config.json or default
    name: str  # --api-base, `api_base`, MIND_API_BASE, model_settings.timeout, ...
    path: Path | None = None  # the file, for .env and config.json

    def describe(self) -> str:
        """E.g. `MIND_MODEL_TIMEOUT in /home/me/.env`."""
        return f"{self.name} in {self.path}" if self.path else f"{self.name} ({self.source})"


class LoadedSettings(NamedTuple):
    """The validated settings, where each came from, and the home's .env lines."""

    values: Settings
    origins: dict[str, Origin]
    dotenv: dict[str, str]
    dotenv_path: Path


def load_settings(
    home: Path, home_origin: Origin, flags: dict[str, tuple[str, Any]]
) -> LoadedSettings:
    """Read every source, highest first; raise SettingError naming the first bad value.

    `flags`: field -> (flag name, value) for the flags given on the command line."""
    _check_home_path(home, home_origin)
    if home.exists() and not home.is_dir():
        raise SettingError(
            f"{home_origin.describe()} = {str(home)!r} is not valid (it is a file); "
            f"it takes {accepts('home')}"
        )
    dotenv_path, config_path = home / ".env", home / "config.json"
    dotenv = read_dotenv(dotenv_path)
    config, config_names = _config_values(config_path)
    given = {k: v for k, v in flags.items() if v[1] is not None}
    layers: list[tuple[dict[str, Any], dict[str, Origin]]] = [
        (
            {k: v for k, (_, v) in given.items()},
            {k: Origin(_given_as(f), f) for k, (f, _) in given.items()},
        ),
        (mind_values(os.environ), _named("environment", None)),
        (_dotenv_values(dotenv_path, dotenv), _named(".env", dotenv_path)),
        (config, {k: Origin("config.json", n, config_path) for k, n in config_names.items()}),
    ]
    merged: dict[str, Any] = {"home": home}
    origins = {"home": home_origin}
    for values, names in layers:
        for name, value in values.items():
            if name not in merged:
                merged[name], origins[name] = value, names[name]
    for name in FIELDS:
        origins.setdefault(name, Origin("default", env_name(name)))
    return LoadedSettings(_validated(merged, origins), origins, dotenv, dotenv_path)


def _validated(merged: dict[str, Any], origins: dict[str, Origin]) -> Settings:
    """The settings from `merged`, validated. Given nothing but the home (checked above by
    `_check_home_path`), they are the defaults, the same values validation gives (a test in
    tests/unit/test_settings.py holds them equal): taken as they are, without building the
    model's validator (most homes set nothing; it cost each command ~2 ms of CPU)."""
    if merged.keys() == {"home"}:
        return Settings.model_construct(home=merged["home"])
    try:
        return Settings(**merged)
    except ValidationError as e:
        raise _one_line(e, merged, origins) from None


NAME_MAX = 255  # bytes in one path component on Linux and macOS filesystems
PATH_MAX = 4096


def _check_home_path(home: Path, origin: Origin) -> None:
    """Refuse, in one line, a home path no command could use: not UTF-8 (the ledger's location
    is a UTF-8 URI), a name over NAME_MAX bytes or a path over PATH_MAX, or one the system
    refuses to look at."""

    def invalid(why: str) -> SettingError:
        shown = str(home).encode("utf-8", "backslashreplace").decode()
        return SettingError(
            f"{origin.describe()} = {shown!r} is not valid ({why}); it takes {accepts('home')}"
        )

    text = str(home)
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid("it is not UTF-8 text; name a folder whose path is UTF-8") from None
    if len(encoded) > PATH_MAX:
        raise invalid(f"the path is longer than {PATH_MAX} bytes")
    for part in home.parts:
        if len(part.encode("utf-8")) > NAME_MAX:
            raise invalid(f"the name {part[:20]}... is longer than {NAME_MAX} bytes")
    try:
        home.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass  # created by init (a file on the way is reported as it is, below or by init)
    except OSError as e:
        raise invalid(e.strerror or str(e)) from None


def _given_as(name: str) -> str:
    """A command-line flag's source (`--api-base`), else a floor argument's (`` `api_base` ``)."""
    return "flag" if name.startswith("-") else "argument"


def _named(source: str, path: Path | None) -> dict[str, Origin]:
    return {name: Origin(source, env_name(name), path) for name in FIELDS}


def _one_line(
    error: ValidationError, merged: dict[str, Any], origins: dict[str, Origin]
) -> SettingError:
    first = error.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else ""
    if name not in FIELDS:
        return SettingError(f"unknown setting {name!r}; {_known()}")
    secret = name == "postgres_dsn"  # the value itself may hold a password
    shown = "(hidden)" if secret else _shown(merged.get(name))
    message = str(first["msg"]).removeprefix("Value error, ")
    return SettingError(
        f"{origins[name].describe()} = {shown} is not valid ({message}); it takes {accepts(name)}"
    )


def _shown(value: Any) -> str:
    """A refused value as the error line shows it. A URL is named by its scheme alone: the
    error path drops every URL but a loopback one from what it prints (a dependency's URL or
    a key inside one), and the user knows which URL they set."""
    if isinstance(value, str):
        scheme = re.match(r"^\s*([A-Za-z][A-Za-z0-9+.-]{0,19})://", value)
        if scheme:
            return f"a URL beginning {scheme.group(1).lower()}://"
    return repr(value)


def read_dotenv(path: Path) -> dict[str, str]:
    """Every KEY=value line of the home's .env (python-dotenv's parsing)."""
    if not path.exists():
        return {}  # most homes: python-dotenv is not imported for them
    from dotenv import dotenv_values

    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise SettingError(f"{path} is not UTF-8 text (byte {e.start}); fix or remove it") from None
    except OSError as e:
        raise SettingError(f"{path} cannot be read ({e.strerror}); fix or remove it") from None
    return {k: v for k, v in dotenv_values(stream=StringIO(text)).items() if v is not None}


def _dotenv_values(path: Path, lines: dict[str, str]) -> dict[str, Any]:
    unknown = sorted(
        k for k in lines if k.upper().startswith("MIND_") and k[5:].lower() not in FIELDS
    )
    if unknown:
        raise SettingError(f"{unknown[0]!r} in {path} is not a setting; {_known_env()}")
    for key in lines:
        if key[5:].lower() in ENV_ONLY and key.upper().startswith("MIND_"):
            raise _file_may_not_set(key[5:].lower(), key, path)
    return mind_values(lines)


def mind_values(variables: Mapping[str, str | None]) -> dict[str, str]:
    """The settings among `variables` (the environment, or .env's lines) by field name: MIND_*
    names in any case, an empty value ignored (env_ignore_empty, as before)."""
    lowered = {k.lower(): v for k, v in variables.items() if v != ""}
    return {n: v for n in FIELDS if (v := lowered.get(env_name(n).lower())) is not None}


def _file_may_not_set(name: str, key: str, path: Path) -> SettingError:
    return SettingError(
        f"{key} in {path}: {ENV_ONLY[name]} is set only by a flag or the environment "
        f"({env_name(name)}); remove it from the file"
    )


def _known() -> str:
    return "settings: " + ", ".join(env_name(n) for n in FIELDS if n != "home")


def _known_env() -> str:
    """The names a home's .env may set (not the home or the clock)."""
    return ".env takes " + ", ".join(env_name(n) for n in FIELDS if n not in ENV_ONLY)


def _unknown_config_key(key: str, path: Path) -> SettingError:
    """Why `key` is not a config.json key, and the key (or command) to use instead."""
    field = key[5:].lower() if key.upper().startswith("MIND_") else ""
    if field in ENV_ONLY:
        return _file_may_not_set(field, key, path)
    if field in FIELDS:
        return SettingError(
            f"{key!r} in {path} is the environment variable's name; config.json calls it {field!r}"
        )
    if key in MIND_KEYS:
        return SettingError(
            f"{key!r} in {path} is a setting of the mind itself, recorded in its ledger: "
            f"use `mind config set {key} VALUE`"
        )
    accepted = [n for n in FIELDS if n not in ENV_ONLY] + ["model_settings"]
    return SettingError(
        f"{key!r} in {path} is not a setting; config.json takes " + ", ".join(accepted)
    )


def _config_values(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """config.json's settings by field name (the older `model_settings` object included), and
    the key each was written under."""
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    for key, value in read_config_file(path).items():
        if key == "model_settings":
            if not isinstance(value, dict):
                raise SettingError(
                    f"model_settings in {path} must be a JSON object, not {_json_type(value)}"
                )
            for old, inner in value.items():
                if old not in LEGACY_MODEL_KEYS:
                    raise SettingError(
                        f"model_settings.{old!r} in {path} is not a setting; model_settings takes "
                        + ", ".join(LEGACY_MODEL_KEYS)
                    )
                field = LEGACY_MODEL_KEYS[old]
                if names.get(field, "model_settings").startswith("model_settings"):
                    values[field], names[field] = inner, f"model_settings.{old}"
        elif key in ENV_ONLY:
            raise _file_may_not_set(key, key, path)
        elif key in FIELDS:
            values[key], names[key] = value, key  # a flat key wins over model_settings
        else:
            raise _unknown_config_key(key, path)
    return values, names


def read_config_file(path: Path) -> dict[str, Any]:
    """The home's config.json as an object (empty when absent)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise SettingError(f"{path} cannot be read ({e}); fix or remove it") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise SettingError(f"{path} is not valid JSON ({e}); fix or remove it") from None
    except RecursionError:
        raise SettingError(f"{path} is nested too deeply to read; fix or remove it") from None
    if not isinstance(data, dict):
        raise SettingError(f"{path} must hold a JSON object ({{...}}), not {_json_type(data)}")
    return data


def _json_type(value: Any) -> str:
    names = {list: "a list", str: "a string", bool: "a boolean", dict: "an object"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")
