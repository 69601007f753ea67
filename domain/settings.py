"""Per-mind settings: what may be configured, how values are checked, and their defaults.

Settings are recorded as events on the identity (`mind.identity.configured`), so a change is
part of the mind's history and replays like everything else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import fields, replace

from mindledger.domain.errors import InvalidInputError
from mindledger.domain.tension import TensionParams

# key -> (parser, check, what it means). Every number is finite (inf and nan are refused by
# `check_setting`), and bounded: a rate or cap of 1e300 would overflow the tension law.
_NUMBER: Callable[[str], float] = float
_MILLION = 1_000_000
# The smallest size a number other than 0 may have: a rate of 1e-320 (a denormal) is a law
# that never moves, and hours or tension finer than a millionth mean nothing here.
_SMALLEST = 1e-6
SETTINGS: dict[str, tuple[Callable[[str], float | int], Callable[[float], bool], str]] = {
    "threads.base_rate": (
        _NUMBER,
        lambda v: 0 < v <= _MILLION,
        "tension per hour right after work (> 0, at most 1000000)",
    ),
    "threads.half_life": (
        _NUMBER,
        lambda v: 0 < v <= _MILLION,
        "hours for the rate to double (> 0, at most 1000000)",
    ),
    "threads.cap": (
        _NUMBER,
        lambda v: 0 < v <= _MILLION,
        "the most tension a thread can hold (> 0, at most 1000000)",
    ),
    "threads.cycle_threshold": (
        _NUMBER,
        lambda v: 0 <= v <= _MILLION,
        "a tick fires when the highest tension exceeds this (0 to 1000000)",
    ),
    "threads.floor_interval": (
        _NUMBER,
        lambda v: 0 <= v <= _MILLION,
        "a tick fires when more hours than this passed since the last cycle; 0 = always "
        "(0 to 1000000)",
    ),
    "threads.max_live_threads": (
        int,
        lambda v: 1 <= v <= 100_000,
        "live threads before triage (1 to 100000)",
    ),
    "threads.top_k": (
        int,
        lambda v: 0 <= v <= 1000,
        "threads shown in every turn's context (0 to 1000)",
    ),
    "threads.work_credit": (
        _NUMBER,
        lambda v: 0 <= v <= _MILLION,
        "tension one credited work removes (0 to 1000000)",
    ),
}
WORKSPACE = "workspace"
EMBEDDING_MODEL = "embedding.model"  # a LiteLLM embedding model, or "off"
EMBEDDING_API_BASE = "embedding.api_base"  # an OpenAI-compatible server's URL, or "off"
EMBEDDING_RECALL = "embedding.recall"  # "on": recall's vector channel uses the model
RECALL_SPANS = "recall.spans"  # "on": recall's spans channel (windows of consecutive messages)
# The offline default (adapters/minilm.py, registered with LiteLLM as the provider `local`).
DEFAULT_EMBEDDING_MODEL = "local/all-minilm-l6-v2"
# On (docs/decisions/0025-vectors-projected-off-the-turns-path.md): stored items are embedded
# by the vector projection, never on a turn's path, so the channel costs a turn only its query's
# embedding; with the offline model missing it steps aside (one warning).
DEFAULT_EMBEDDING_RECALL = "on"
# Off: on LoCoMo the spans channel moved evidence recall by less than the noise and cost recall
# time (docs/benchmarks/locomo-spans.md).
DEFAULT_RECALL_SPANS = "off"
TEXT_SETTINGS = {
    WORKSPACE: "folder whose files count as evidence of work on threads",
    EMBEDDING_MODEL: "LiteLLM embedding model for semantic matching and recall's vector "
    "channel (local/all-minilm-l6-v2 runs offline), or off",
    EMBEDDING_API_BASE: "base URL of an OpenAI-compatible embedding server, or off",
    EMBEDDING_RECALL: "on or off: recall's vector channel (cosine over the latest messages, "
    "embedded by the vector projection)",
    RECALL_SPANS: "on or off: recall's spans channel (windows of consecutive messages)",
}
KEYS = (*SETTINGS, *TEXT_SETTINGS)
# The embedding server's base URL: a request goes there with the provider's key.
_HTTP_URL = re.compile(r"^https?://[^\s/]+\S*$")
# A LiteLLM model name: provider/model segments of name characters, never a path (`..`, `/x`).
_MODEL_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+-]*(/[A-Za-z0-9_][A-Za-z0-9_.:@+-]*)*$")


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
        if key in (EMBEDDING_RECALL, RECALL_SPANS) and value not in ("on", "off"):
            raise InvalidInputError(f"{key} must be on or off")
        if key == EMBEDDING_API_BASE and value != "off" and not _HTTP_URL.match(value):
            raise InvalidInputError(f"{key} must be an http:// or https:// URL, or off")
        if key == EMBEDDING_MODEL and not (_MODEL_NAME.match(value) and len(value) <= 200):
            raise InvalidInputError(
                f"{key} must be a LiteLLM model name like {DEFAULT_EMBEDDING_MODEL} or "
                "openai/text-embedding-3-small (letters, digits, . _ - : @ + between /), or off"
            )
        return value
    if key not in SETTINGS:
        raise InvalidInputError(f"unknown setting {key!r}; settings: {', '.join(KEYS)}")
    parse, ok, meaning = SETTINGS[key]
    what = "a whole number" if parse is int else "a number"
    try:
        number = parse(value.strip())
    except ValueError:  # also a whole number of more than 4300 digits
        raise InvalidInputError(f"{key} must be {what}: {meaning}") from None
    shown = value if len(value) <= 40 else value[:37] + "..."
    if not math.isfinite(number) or not ok(number):  # NaN fails every comparison; inf passes >
        raise InvalidInputError(f"{key}={shown!r} is out of range: {meaning}")
    if math.copysign(1.0, number) < 0:  # -0 passes `0 <= v` and would be recorded as "-0.0"
        raise InvalidInputError(f"{key}={shown!r} is negative: {meaning}")
    if number != 0 and abs(number) < _SMALLEST:
        raise InvalidInputError(
            f"{key}={shown!r} is too small (the least above 0 is {_SMALLEST:g}): {meaning}"
        )
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
    out[RECALL_SPANS] = DEFAULT_RECALL_SPANS
    return out
