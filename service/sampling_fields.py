"""A turn's `system` and `sampling` as the HTTP API's turn route and the MCP `turn` tool take
them: the sampling object's JSON schema, its bounds the floor's own (`domain.sampling`), so
what a client is shown is what the floor checks. The floor checks the values again; MCP
refuses out-of-range values at its argument model, the HTTP API at the floor."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
)

from mindledger.domain.sampling import (
    MAX_REPLY_TOKENS,
    MAX_STOP_CHARS,
    MAX_STOPS,
    MAX_USER_CHARS,
    RANGES,
    SEED_BOUND,
)

SYSTEM_HELP = (
    "Your system prompt for this turn: sent after the mind's own (quoted, so it cannot "
    "override it) and recorded with the turn."
)
SAMPLING_HELP = (
    "Sampling settings for this reply (each optional; unset: the model's own): temperature, "
    "top_p, max_tokens, stop, seed, presence_penalty, frequency_penalty, user. Recorded with "
    'the turn. Example: {"temperature": 0.2, "max_tokens": 300, "stop": ["END"]}.'
)


StopSequence = Annotated[str, StringConstraints(min_length=1, max_length=MAX_STOP_CHARS)]


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


_ONE_STOP = {"type": "string", "minLength": 1, "maxLength": MAX_STOP_CHARS}
# One text or a list of them, as OpenAI takes it (and the floor); checked as a list.
Stops = Annotated[
    list[StopSequence],
    Field(max_length=MAX_STOPS),
    BeforeValidator(_as_list),
    WithJsonSchema(
        {"anyOf": [_ONE_STOP, {"type": "array", "items": _ONE_STOP, "maxItems": MAX_STOPS}]}
    ),
]


def _number(name: str, description: str) -> Any:
    low, high = RANGES[name]
    return Field(None, ge=low, le=high, description=description)


class Sampling(BaseModel):
    """The sampling settings a caller may give a turn (strict: `true` is not a number)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    temperature: float | None = _number("temperature", "Randomness: 0 is the most predictable.")
    top_p: float | None = _number("top_p", "Nucleus sampling: the probability mass kept.")
    max_tokens: int | None = Field(
        None, ge=1, le=MAX_REPLY_TOKENS, description="The most tokens the reply may have."
    )
    stop: Stops | None = Field(None, description="Sequences that end the reply where they appear.")
    seed: int | None = Field(
        None, ge=-SEED_BOUND, le=SEED_BOUND - 1, description="For repeatable sampling."
    )
    presence_penalty: float | None = _number(
        "presence_penalty", "Above 0: less of what was already said."
    )
    frequency_penalty: float | None = _number("frequency_penalty", "Above 0: fewer repeated words.")
    user: str | None = Field(
        None, min_length=1, max_length=MAX_USER_CHARS, description="The end user's id."
    )

    def chosen(self) -> dict[str, Any]:
        """The settings given, as the floor's `sampling` argument."""
        return self.model_dump(exclude_none=True)


def sampling_schema() -> dict[str, Any]:
    """The JSON schema of the `sampling` object (as the OpenAPI document lists it)."""
    schema = Sampling.model_json_schema()
    schema.pop("title", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
    return schema
