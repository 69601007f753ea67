"""The checks every OpenAI-compatible body reader here shares (legacy completions, the
Responses API, embeddings; chat's are in chat_request.py): a JSON object of fields the route
defines, a model `mind/<name>`, and fields a turn honours only at a value that asks nothing of
it. Each refusal is a 400 naming the field (`param`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mindledger.service.chat_request import PREFIX
from mindledger.service.errors import ApiError


def known_fields(body: Any, known: frozenset[str], what: str) -> dict[str, Any]:
    """`body` as an object holding only `known` fields (`what`: the route's kind of request)."""
    if not isinstance(body, dict):
        raise ApiError(400, "bad_request", "the body must be a JSON object")
    for name in body:
        if name not in known:
            hint = " (a mind's own options go in mind_options)" if "mind_options" in known else ""
            raise ApiError(
                400,
                "unknown_parameter",
                f"unknown field {name[:80]!r}: not {what} field this server takes{hint}",
                name[:80],
            )
    return body


def mind_model(body: Mapping[str, Any]) -> str:
    """The body's `model`, which names a mind (`mind/<name>`)."""
    model = body.get("model")
    if not isinstance(model, str) or not model.startswith(PREFIX):
        raise ApiError(
            400, "model_not_found", f"model must be {PREFIX}<name> (GET /v1/models)", "model"
        )
    return model


def neutral_only(
    body: Mapping[str, Any], neutral: Mapping[str, tuple[Any, ...]], why: Mapping[str, str]
) -> None:
    """Each field of `neutral` absent, null or at one of its values (of the same JSON type:
    `true` is not 1); else a 400 saying `why`."""
    for name, values in neutral.items():
        value = body.get(name)
        if value is None or any(value == ok and type(value) is type(ok) for ok in values):
            continue
        said = why.get(name, f"{name} is not supported by a mind's turn; leave it out")
        raise ApiError(400, "unsupported_parameter", said, name)
