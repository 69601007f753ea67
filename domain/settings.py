"""Per-mind settings: what may be configured, how values are checked, and their defaults.

Settings are recorded as events on the identity (`mind.identity.configured`), so a change is
part of the mind's history and replays like everything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import fields, replace

from mindledger.domain.errors import InvalidInputError
from mindledger.domain.tension import TensionParams

# key -> (parser, check, what it means)
_NUMBER: Callable[[str], float] = float
SETTINGS: dict[str, tuple[Callable[[str], float | int], Callable[[float], bool], str]] = {
    "threads.base_rate": (_NUMBER, lambda v: v > 0, "tension per hour right after work (> 0)"),
    "threads.half_life": (_NUMBER, lambda v: v > 0, "hours for the rate to double (> 0)"),
    "threads.cap": (_NUMBER, lambda v: v > 0, "the most tension a thread can hold (> 0)"),
    "threads.cycle_threshold": (
        _NUMBER,
        lambda v: v >= 0,
        "a tick fires when the highest tension exceeds this (>= 0)",
    ),
    "threads.floor_interval": (
        _NUMBER,
        lambda v: v >= 0,
        "a tick fires when more hours than this passed since the last cycle; 0 = always (>= 0)",
    ),
    "threads.max_live_threads": (int, lambda v: v >= 1, "live threads before triage (>= 1)"),
    "threads.top_k": (int, lambda v: v >= 0, "threads shown in every turn's context (>= 0)"),
    "threads.work_credit": (_NUMBER, lambda v: v >= 0, "tension one credited work removes"),
}
WORKSPACE = "workspace"
EMBEDDING_MODEL = "embedding.model"  # a LiteLLM embedding model, or "off"
EMBEDDING_API_BASE = "embedding.api_base"  # an OpenAI-compatible server's URL, or "off"
EMBEDDING_RECALL = "embedding.recall"  # "on": recall's vector channel uses the model
# The offline default (adapters/minilm.py, registered with LiteLLM as the provider `local`).
DEFAULT_EMBEDDING_MODEL = "local/all-minilm-l6-v2"
# Off: on LoCoMo the vector channel did not raise evidence recall enough to pay for its latency
# (BENCHMARKS.md "Embeddings").
DEFAULT_EMBEDDING_RECALL = "off"
TEXT_SETTINGS = {
    WORKSPACE: "folder whose files count as evidence of work on threads",
    EMBEDDING_MODEL: "LiteLLM embedding model for semantic matching and recall's vector "
    "channel (local/all-minilm-l6-v2 runs offline), or off",
    EMBEDDING_API_BASE: "base URL of an OpenAI-compatible embedding server, or off",
    EMBEDDING_RECALL: "on or off: recall's vector channel (cosine over the latest messages)",
}
KEYS = (*SETTINGS, *TEXT_SETTINGS)
# The embedding server's base URL: a request goes there with the provider's key.
_HTTP_URL = re.compile(r"^https?://[^\s/]+\S*$")


def meaning(key: str) -> str:
    """What a setting means (the help `mind config show` prints)."""
    return SETTINGS[key][2] if key in SETTINGS else TEXT_SETTINGS[key]


def check_setting(key: str, value: str) -> str:
    """The value as it will be recorded; raises InvalidInputError naming what is wrong."""
    if key in TEXT_SETTINGS:
        value = value.strip()
        if not value or "\x00" in value or "\n" in value:
            what = "a directory path" if key == WORKSPACE else "one line of text (or off)"
            raise InvalidInputError(f"{key} must be {what}")
        if key == EMBEDDING_RECALL and value not in ("on", "off"):
            raise InvalidInputError(f"{key} must be on or off")
        if key == EMBEDDING_API_BASE and value != "off" and not _HTTP_URL.match(value):
            raise InvalidInputError(f"{key} must be an http:// or https:// URL, or off")
        return value
    if key not in SETTINGS:
        raise InvalidInputError(f"unknown setting {key!r}; settings: {', '.join(KEYS)}")
    parse, ok, meaning = SETTINGS[key]
    try:
        number = parse(value.strip())
    except ValueError:
        raise InvalidInputError(f"{key} must be a number: {meaning}") from None
    if number != number or not ok(number):  # NaN fails every comparison
        raise InvalidInputError(f"{key}={value!r} is out of range: {meaning}")
    return str(number)


def thread_params(config: Mapping[str, str]) -> TensionParams:
    """The tension law's parameters with this mind's settings applied."""
    params = TensionParams()
    changes: dict[str, float | int] = {}
    names = {f.name for f in fields(TensionParams)}
    for key, value in config.items():
        name = key.removeprefix("threads.")
        if key in SETTINGS and name in names:
            changes[name] = SETTINGS[key][0](value)
    return replace(params, **changes)  # type: ignore[arg-type]


def defaults() -> dict[str, str]:
    """Every setting's default value, as text."""
    params = TensionParams()
    out = {key: str(getattr(params, key.removeprefix("threads."))) for key in SETTINGS}
    out[WORKSPACE] = "(the home's workspace/ folder)"
    out[EMBEDDING_MODEL] = DEFAULT_EMBEDDING_MODEL
    out[EMBEDDING_API_BASE] = "off"
    out[EMBEDDING_RECALL] = DEFAULT_EMBEDDING_RECALL
    return out
