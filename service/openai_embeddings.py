"""`POST /v1/embeddings`, OpenAI's embeddings: `input` (a text or a list of texts) embedded by
`mind/<name>`'s configured embedding model (`MindLedger.embed`: the offline all-MiniLM-L6-v2
unless `embedding.model` names another), answered in OpenAI's list shape with `usage`.
`encoding_format` float or base64 (little-endian float32, as OpenAI sends it and its SDK asks
by default); `dimensions` only as the model's own (a vector is never cut). Token ids as input,
an empty text or one the offline model would cut are 400s naming `input`; an embedding model
that is off or not installed is a 503 saying how to turn it on or install it. Nothing is
recorded or cached (the floor says why)."""

from __future__ import annotations

import base64
import struct
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from mindledger.domain.errors import MindError
from mindledger.service.endpoints import Call, Endpoint, read_json
from mindledger.service.errors import ApiError, error_body, mind_error_response
from mindledger.service.openai_api import _the_mind, mind_secrets
from mindledger.service.openai_fields import known_fields, mind_model

if TYPE_CHECKING:
    from mindledger.service.app import Extension
    from mindledger.service.minds import Minds, ServedMind

KNOWN = frozenset(("model", "input", "encoding_format", "dimensions", "user"))
FORMATS = ("float", "base64")


def _texts(given: Any) -> list[str]:
    if isinstance(given, str):
        return [given]
    if isinstance(given, list) and given and all(isinstance(t, str) for t in given):
        return given
    if isinstance(given, list) and given:
        # LangChain's OpenAIEmbeddings sends token ids unless told not to.
        why = (
            "input as token ids is not supported: send the texts (LangChain's "
            "OpenAIEmbeddings: check_embedding_ctx_length=False)"
        )
    else:
        why = "input must be a text or a non-empty list of texts"
    raise ApiError(400, "invalid_input", why, "input")


def embeddings_request(body: Any) -> tuple[str, list[str], str, int | None]:
    """The body's model, texts, encoding format and dimensions (ApiError 400 naming a field)."""
    body = known_fields(body, KNOWN, "an embeddings")
    model = mind_model(body)
    texts = _texts(body.get("input"))
    encoding = body.get("encoding_format")
    encoding = "float" if encoding is None else encoding
    if encoding not in FORMATS:
        raise ApiError(
            400, "invalid_request", "encoding_format must be float or base64", "encoding_format"
        )
    dimensions = body.get("dimensions")
    if dimensions is not None and (
        not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions < 1
    ):
        raise ApiError(400, "invalid_request", "dimensions must be a whole number", "dimensions")
    if body.get("user") is not None:
        raise ApiError(
            400, "unsupported_parameter", "user is not supported by embeddings here", "user"
        )
    return model, texts, encoding, dimensions


def _field(param: str | None, single: bool) -> str | None:
    """The request field a floor argument came from (`texts[2]` is `input[2]`)."""
    if param is None or not param.startswith("texts"):
        return param
    return "input" if single else "input" + param.removeprefix("texts")


def _vector(values: list[float], encoding: str) -> list[float] | str:
    if encoding == "float":
        return values
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


async def embeddings(call: Call) -> Response:
    from mindledger.errors import EmbeddingError

    mind: ServedMind | None = None
    single = False
    try:
        body = await read_json(call.request, call.max_body)
        model, texts, encoding, dimensions = embeddings_request(body)
        single = isinstance(body.get("input"), str)
        mind = _the_mind(call, model)
        result = await run_in_threadpool(mind.embed, texts, dimensions)
    except ApiError as e:
        return JSONResponse(error_body(e.status, e.code, e.message, e.param), e.status)
    except EmbeddingError as e:  # the provider's failure, not the client's
        return JSONResponse(error_body(502, "embedding_failed", str(e)), 502)
    except MindError as e:
        e.param = _field(e.param, single)
        home = mind.home.path if mind is not None else None
        return mind_error_response(e, mind_secrets(call), home)
    data = [
        {"object": "embedding", "index": n, "embedding": _vector(v, encoding)}
        for n, v in enumerate(result.vectors)
    ]
    usage = {"prompt_tokens": result.tokens, "total_tokens": result.tokens}
    return JSONResponse(
        {
            "object": "list",
            "data": data,
            "model": model,
            "usage": usage,
            "mind_embedding_model": result.model,
        }
    )


EMBEDDINGS = {
    "type": "object",
    "required": ["object", "data", "model", "usage", "mind_embedding_model"],
    "properties": {
        "object": {"const": "list"},
        "data": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["object", "index", "embedding"],
                "properties": {
                    "object": {"const": "embedding"},
                    "index": {"type": "integer"},
                    "embedding": {
                        "oneOf": [
                            {"type": "array", "items": {"type": "number"}},
                            {"type": "string", "description": "base64 little-endian float32"},
                        ]
                    },
                },
            },
        },
        "model": {"type": "string"},
        "usage": {
            "type": "object",
            "required": ["prompt_tokens", "total_tokens"],
            "properties": {
                "prompt_tokens": {"type": "integer"},
                "total_tokens": {"type": "integer"},
            },
        },
        "mind_embedding_model": {
            "type": "string",
            "description": "The mind's embedding.model that computed the vectors.",
        },
    },
}


def extension(minds: Minds) -> Extension:
    """`POST /v1/embeddings` on the server."""
    from mindledger.service import openai_bodies
    from mindledger.service.app import Extension

    return Extension(
        endpoints=[
            Endpoint(
                "POST",
                "/v1/embeddings",
                embeddings,
                "OpenAI-compatible embeddings: `input` embedded by mind/<name>'s embedding "
                "model (the offline all-MiniLM-L6-v2 by default); encoding_format float or "
                "base64; nothing recorded.",
                tags=("openai",),
                result=EMBEDDINGS,
                own_body=openai_bodies.embeddings_body,
            )
        ]
    )
