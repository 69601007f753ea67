"""A turn's sampling settings: what a caller asks of the model for one reply (temperature,
top_p, a reply limit, stop sequences, a seed, penalties, the end user's id), each checked
against the range providers accept (OpenAI's, which LiteLLM passes on), recorded with the turn
and passed to the model. An unset setting is the model's own (the home's settings)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from mindledger.domain.budgets import shown_number
from mindledger.domain.errors import InvalidInputError

# The most tokens a reply may be asked for (more than any model gives; the bound keeps a
# typo such as 10**12 from reaching a provider as a request it refuses late).
MAX_REPLY_TOKENS = 1_000_000
MAX_STOPS = 4  # OpenAI's limit
MAX_STOP_CHARS = 200
MAX_USER_CHARS = 256
SEED_BOUND = 2**63  # a signed 64-bit seed, as OpenAI's


@dataclass(frozen=True)
class Sampling:
    """The settings a caller chose for one reply (None: the model's own)."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    user: str | None = None

    def chosen(self) -> dict[str, Any]:
        """The settings given, by name, as recorded with the turn (JSON values)."""
        return {
            k: list(v) if isinstance(v, tuple) else v
            for k, v in asdict(self).items()
            if v is not None
        }

    def __bool__(self) -> bool:
        return bool(self.chosen())


# name -> (lowest, highest) for the numbers (front-ends publish them in their schemas).
RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "presence_penalty": (-2.0, 2.0),
    "frequency_penalty": (-2.0, 2.0),
}
NAMES = tuple(Sampling.__dataclass_fields__)


def _number(name: str, value: Any) -> float:
    low, high = RANGES[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"`{name}` must be a number from {low:g} to {high:g}", param=name)
    # An integer is compared as it is: one too large for a float is out of range, not a crash.
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInputError(f"`{name}` must be a number from {low:g} to {high:g}", param=name)
    if not low <= value <= high:
        raise InvalidInputError(
            f"`{name}` is {shown_number(value)}; it must be from {low:g} to {high:g}", param=name
        )
    return float(value)


def _integer(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"`{name}` must be a whole number", param=name)
    if not low <= value <= high:
        raise InvalidInputError(
            f"`{name}` is {shown_number(value)}; it must be from {low:,} to {high:,}", param=name
        )
    return value


def _stops(value: Any) -> tuple[str, ...]:
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list | tuple) or not all(isinstance(s, str) for s in stops):
        raise InvalidInputError("`stop` must be a text or a list of texts", param="stop")
    if len(stops) > MAX_STOPS:
        raise InvalidInputError(f"`stop` holds at most {MAX_STOPS} sequences", param="stop")
    if any(not s or len(s) > MAX_STOP_CHARS for s in stops):
        raise InvalidInputError(
            f"each `stop` sequence must be 1 to {MAX_STOP_CHARS} characters", param="stop"
        )
    return tuple(stops)


def _user(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_USER_CHARS:
        raise InvalidInputError(
            f"`user` must be a text of 1 to {MAX_USER_CHARS} characters", param="user"
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise InvalidInputError("`user` must not hold control characters", param="user")
    return value


def checked_sampling(given: Mapping[str, Any] | Sampling | None) -> Sampling:
    """The settings in `given` (by name; None values are unset), each checked: an unknown
    name or a value out of range raises InvalidInputError naming it (`param`)."""
    if given is None:
        return Sampling()
    if isinstance(given, Sampling):
        given = given.chosen()
    fields: dict[str, Any] = {}
    for name, value in given.items():
        if name not in NAMES:
            raise InvalidInputError(
                f"`{name}` is not a sampling setting ({', '.join(NAMES)})", param=name
            )
        if value is None:
            continue
        if name in RANGES:
            fields[name] = _number(name, value)
        elif name == "max_tokens":
            fields[name] = _integer(name, value, 1, MAX_REPLY_TOKENS)
        elif name == "seed":
            fields[name] = _integer(name, value, -SEED_BOUND, SEED_BOUND - 1)
        elif name == "stop":
            stops = _stops(value)
            if stops:  # an empty list asks for no stop sequence: the model's own end
                fields[name] = stops
        else:
            fields[name] = _user(value)
    return Sampling(**fields)
