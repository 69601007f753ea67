"""The OpenAI-compatible routes' request bodies as the OpenAPI document publishes them.

Each of these routes reads its body by its own rules (service/chat_request.py and its
siblings: OpenAI's fields mapped onto the floor's turn, each refusal naming the field), so
these models are made from the same tables: every field the route takes (its `KNOWN`) and no
other (`additionalProperties: false`), the sampling settings with the bounds the floor checks
(`sampling_fields.Sampling`), a field honoured only at a neutral value with exactly those
values, the rest as OpenAI types them. tests/service/test_openapi_properties.py holds them to
the routes: whatever they call invalid must be refused."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from mindledger.domain.budgets import MAX_BUDGET, TURN_BUDGET_FLOOR
from mindledger.domain.client_chat import NAME_PATTERN
from mindledger.service.sampling_fields import Sampling

MIND_MODEL = Annotated[
    str,
    Field(pattern="^mind/", description="The mind answering, as `mind/<name>` (GET /v1/models)."),
]


def _no_defaults(schema: dict[str, Any]) -> None:
    # Fields here are optional, not nullable: a default of null would say null is sent.
    for prop in schema.get("properties", {}).values():
        if prop.get("default", 0) is None:
            del prop["default"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_no_defaults)


class MindOptions(_Strict):
    """A mind's own choices for the turn (none may be null)."""

    model: str = Field(None, description="A model spec; default: the mind's model.")  # type: ignore[assignment]
    mock_reply: str = Field(None, description="With model `mock`: the scripted reply.")  # type: ignore[assignment]
    api_base: str = Field(None, description="An OpenAI-compatible server's base URL.")  # type: ignore[assignment]
    budget: int = Field(  # type: ignore[assignment]
        None, ge=TURN_BUDGET_FLOOR, le=MAX_BUDGET, description="Token budget for memory."
    )


class StreamOptions(_Strict):
    """What a stream adds: a last chunk with the usage."""

    include_usage: bool = Field(None, description="A last chunk with the usage.")  # type: ignore[assignment]


class TextPart(BaseModel):
    """A text part of a message's content (other keys are not read)."""

    type: Literal["text"]
    text: str


class ChatMessage(_Strict):
    """A message of the conversation."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | Annotated[list[TextPart], Field(min_length=1)] | None = None
    tool_calls: list[dict[str, Any]] | None = Field(None, description="An assistant's.")
    tool_call_id: str | None = Field(None, description="A tool's: the call it answers.")
    name: str | None = Field(
        None,
        pattern=f"^{NAME_PATTERN.pattern}$",
        description="A user's or assistant's speaker (several agents' messages, each named): "
        "sent with the message and recorded. A system, developer or tool message takes none.",
    )
    refusal: Annotated[Any, WithJsonSchema({"anyOf": [{"type": "null"}, {"const": []}]})] = None
    function_call: Annotated[Any, WithJsonSchema({"anyOf": [{"type": "null"}, {"const": []}]})] = (
        None
    )
    audio: Annotated[Any, WithJsonSchema({"anyOf": [{"type": "null"}, {"const": []}]})] = None
    annotations: Annotated[Any, WithJsonSchema({"anyOf": [{"type": "null"}, {"const": []}]})] = None


class InputPart(BaseModel):
    """A text part of a Responses input item (other keys only as null)."""

    model_config = ConfigDict(
        extra="allow", json_schema_extra={"additionalProperties": {"type": "null"}}
    )

    type: Literal["input_text", "output_text"]
    text: str
    annotations: Any = None
    logprobs: Any = None


class InputItem(_Strict):
    """A message item of a Responses input."""

    role: Literal["system", "developer", "user", "assistant"]
    content: str | Annotated[list[InputPart], Field(min_length=1)]
    type: Literal["message"] = Field(None, description="Only message items.")  # type: ignore[arg-type]
    id: Any = None
    status: Any = None
    phase: Any = None


def _neutral(values: tuple[Any, ...]) -> Any:
    """A field taken only at one of `values` (or null)."""
    choices = [{"const": v} for v in values] + [{"type": "null"}]
    return (Annotated[Any, WithJsonSchema({"anyOf": choices})], None)


def _sampling(fields: Mapping[str, str]) -> dict[str, Any]:
    """Request field -> the floor's sampling setting it fills, typed as the setting."""
    return {
        name: (Sampling.model_fields[setting].annotation, Sampling.model_fields[setting])
        for name, setting in fields.items()
    }


def _model(
    name: str,
    known: Iterable[str],
    typed: Mapping[str, Any],
    neutral: Mapping[str, tuple[Any, ...]],
    doc: str,
) -> type[BaseModel]:
    """A body model for the document: each `known` field typed, neutral, or any JSON value."""
    fields: dict[str, Any] = {}
    for field in [*typed, *sorted(set(known) - set(typed))]:
        if field in typed:
            fields[field] = typed[field]
        elif field in neutral:
            fields[field] = _neutral(neutral[field])
        else:
            fields[field] = (Any, None)
    return create_model(name, __base__=_Strict, __doc__=doc, **fields)


def _common() -> dict[str, Any]:
    return {
        "model": (MIND_MODEL, ...),
        "stream": (bool | None, None),
        "mind_options": (MindOptions | None, None),
    }


def chat_body() -> type[BaseModel]:
    """`POST /v1/chat/completions`."""
    from mindledger.service import chat_request as chat

    typed = {
        **_common(),
        "messages": (Annotated[list[ChatMessage], Field(min_length=1)], ...),
        "stream_options": (StreamOptions | None, None),
        **_sampling(chat.SAMPLING),
        "tools": (list[dict[str, Any]] | None, None),
        "tool_choice": (str | dict[str, Any] | None, None),
        "parallel_tool_calls": (bool | None, None),
        "response_format": (dict[str, Any] | None, None),
    }
    return _model("ChatCompletionBody", chat.KNOWN, typed, chat.NEUTRAL, "A chat completion.")


def completion_body() -> type[BaseModel]:
    """`POST /v1/completions`."""
    from mindledger.service import openai_completions as legacy

    one = Annotated[list[str], Field(min_length=1, max_length=1)]
    typed = {
        **_common(),
        "prompt": (str | one, ...),
        "stream_options": (StreamOptions | None, None),
        **_sampling({name: name for name in legacy.LEGACY_SAMPLING}),
    }
    return _model("CompletionBody", legacy.KNOWN, typed, legacy.NEUTRAL, "A legacy completion.")


def embeddings_body() -> type[BaseModel]:
    """`POST /v1/embeddings`."""
    from mindledger.service import openai_embeddings as embed

    typed = {
        "model": (MIND_MODEL, ...),
        "input": (str | Annotated[list[str], Field(min_length=1)], ...),
        "encoding_format": (Literal["float", "base64"] | None, None),
        "dimensions": (Annotated[int, Field(ge=1)] | None, None),
    }
    return _model("EmbeddingsBody", embed.KNOWN, typed, {"user": ()}, "Texts to embed.")


def responses_body() -> type[BaseModel]:
    """`POST /v1/responses`."""
    from mindledger.service import responses_request as responses

    obfuscation = {"include_obfuscation": {"anyOf": [{"const": False}, {"type": "null"}]}}
    stream_options = {
        "anyOf": [
            {"type": "object", "additionalProperties": False, "properties": obfuscation},
            {"type": "null"},
        ]
    }
    typed = {
        **_common(),
        "input": (str | Annotated[list[InputItem], Field(min_length=1)], ...),
        "instructions": (str | None, None),
        "max_output_tokens": _sampling({"max_output_tokens": "max_tokens"})["max_output_tokens"],
        "stream_options": (Annotated[Any, WithJsonSchema(stream_options)], None),
        **_sampling(
            {name: "user" if name == "safety_identifier" else name for name in responses.SAMPLING}
        ),
    }
    return _model(
        "ResponsesBody", responses.KNOWN, typed, responses.NEUTRAL, "A Responses API request."
    )
