"""Inputs the fuzzers skip because another branch is fixing exactly them (issue 12).

KNOWN_OPEN names each open defect and says which inputs show it. The lead deletes an entry (and
this whole module once empty) after merging the branch that fixes it; the fuzzers then cover
those inputs again. Nothing here hides a defect of the areas the fuzz branch owns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

Inputs = tuple[Sequence[str], Mapping[str, str]]


def _undecodable(text: str) -> bool:
    """Text holding surrogates: what a non-UTF-8 command-line argument becomes in Python."""
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _not_a(kind: type, value: str | None) -> bool:
    """Whether a set value does not parse as `kind` (what the settings branch will refuse)."""
    if value is None:
        return False
    try:
        kind(value)
    except ValueError:
        return True
    return False


TURNS = ("turn", "tick", "chat")
_NOT_JSON = object()


def _config(env: Mapping[str, str]) -> object:
    """The fuzzed config.json's value (_NOT_JSON when absent or not JSON: that is refused)."""
    text = env.get("config.json")
    if text is None:
        return _NOT_JSON
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def _bad_model_settings(config: object) -> bool:
    if not isinstance(config, dict) or "model_settings" not in config:
        return False
    settings = config["model_settings"]
    return not isinstance(settings, dict) or any(
        key in settings for key in ("timeout", "retries", "max_tokens", "fallbacks", "api_base")
    )


def _invalid_utf8(text: str | None) -> bool:
    """Whether the bytes of a fuzzed file (carried as latin-1 text) are not UTF-8."""
    if text is None:
        return False
    try:
        text.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _controlled(text: str) -> bool:
    return _undecodable(text) or any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in text)


def _malformed_locomo(text: str | None) -> bool:
    """Whether a file is JSON of LoCoMo's outer shape (a list) with a sample or turn that is not
    the objects and strings the importer indexes into."""
    try:
        data = json.loads((text or "").encode("latin-1"))
    except ValueError:
        return False
    if not isinstance(data, list):
        return False

    def sample_ok(sample: object) -> bool:
        if not isinstance(sample, dict):
            return False
        conv = sample.get("conversation")
        if not isinstance(conv, dict) or "sample_id" not in sample:
            return False
        if not all(isinstance(conv.get(k), str) for k in ("speaker_a", "speaker_b")):
            return False
        for key, turns in conv.items():
            if key.startswith("session_") and not key.endswith("date_time"):
                number = key.split("_")[1] if key.count("_") else ""
                if not number.isdigit() or not isinstance(conv.get(f"{key}_date_time"), str):
                    return False
                if not isinstance(turns, list) or not all(
                    isinstance(t, dict) and all(k in t for k in ("speaker", "dia_id"))
                    for t in turns
                ):
                    return False
        return True

    return not all(sample_ok(s) for s in data)


KNOWN_OPEN: dict[str, Callable[[Sequence[str], Mapping[str, str]], bool]] = {
    # boundary: non-UTF-8 arguments (`mind recall $'\xff'`) reach DuckDB/SQLite and raise
    # "cannot encode str as UTF-8, surrogate ... not allowed" (issue 12, "No traceback, ever").
    "non-utf8-argument": lambda args, env: any(_undecodable(a) for a in args),
    # settings: MIND_MODEL_TIMEOUT=abc, MIND_MODEL_RETRIES=x, MIND_MAX_TOKENS=x reach float()/int()
    # in cli/compose.build_model: "ValueError: could not convert string to float".
    "bad-model-number-env": lambda args, env: (
        bool(args)
        and args[0] in TURNS
        and (
            _not_a(float, env.get("MIND_MODEL_TIMEOUT"))
            or _not_a(int, env.get("MIND_MODEL_RETRIES"))
            or _not_a(int, env.get("MIND_MAX_TOKENS"))
        )
    ),
    # settings: config.json holding [], "str", 42 or null breaks every command
    # ("AttributeError: 'NoneType' object has no attribute 'get'").
    "config-not-an-object": lambda args, env: (
        _config(env) is not _NOT_JSON and not isinstance(_config(env), dict)
    ),
    # settings: {"model_settings": "oops"} or {"model_settings": {"timeout": "abc"}} breaks turn;
    # every model_settings value is skipped until typed settings check them.
    "config-model-settings": lambda args, env: (
        bool(args) and args[0] in TURNS and _bad_model_settings(_config(env))
    ),
    # settings: MIND_LOCK_TIMEOUT=abc reaches eventsourcing ("OSError: SQLite environment value
    # for key 'SQLITE_LOCK_TIMEOUT' is invalid").
    "bad-lock-timeout-env": lambda args, env: _not_a(int, env.get("MIND_LOCK_TIMEOUT") or None),
    # settings (cli/config_cmds.py): `config set workspace` with a name longer than the
    # filesystem allows reaches Path.resolve ("OSError: [Errno 36] File name too long").
    "workspace-name-too-long": lambda args, env: (
        list(args[:3]) == ["config", "set", "workspace"]
        and any(len(part.encode(errors="surrogateescape")) > 255 for part in args[3].split("/"))
    ),
    # lead (projections/replay.py, cli/projection_cmds.py; unowned): `replay --into` a path
    # holding a single quote is pasted into DuckDB SQL unescaped ("CatalogException: Table with
    # name events does not exist!"), one with a name over 255 bytes raises "OSError: [Errno 36]
    # File name too long"; duckdb_files.connect escapes quotes, the compare step does not.
    "replay-into-unusable-path": lambda args, env: (
        bool(args)
        and args[0] == "replay"
        and any(
            "'" in a
            or any(len(part.encode(errors="surrogateescape")) > 255 for part in a.split("/"))
            for a in args[1:]
        )
    ),
    # boundary (import validation): a LoCoMo file of the wrong shape ([null], a conversation
    # that is no object, turns without speaker/dia_id) raises TypeError/KeyError/AttributeError.
    "locomo-wrong-shape": lambda args, env: (
        list(args[:2]) == ["import", "locomo"] and _malformed_locomo(env.get("file"))
    ),
    # boundary: `mind chat` ends the session at the first line with a control character or
    # invalid UTF-8 (exit 1 after earlier lines' turns were recorded) instead of refusing it.
    "chat-control-line": lambda args, env: (
        bool(args) and args[0] == "chat" and any(_controlled(a) for a in args[1:])
    ),
    # settings: a .env with invalid UTF-8 ("UnicodeDecodeError" in cli/compose.load_dotenv).
    "dotenv-invalid-utf8": lambda args, env: (
        bool(args) and args[0] in TURNS and _invalid_utf8(env.get(".env"))
    ),
}


def known_open(args: Sequence[str], env: Mapping[str, str] | None = None) -> str | None:
    """The name of the open defect these inputs would show, or None."""
    for name, shows in KNOWN_OPEN.items():
        if shows(args, env or {}):
            return name
    return None
