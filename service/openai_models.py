"""OpenAI's model objects for the minds a token opens: `GET /v1/models/{model}` (one mind,
`mind/NAME`) and the objects `GET /v1/models` lists.

A model id holds a slash, and clients send it both ways: older OpenAI SDKs and most
hand-written clients unescaped (`/v1/models/mind/Echo`), newer SDKs escaped (`mind%2FEcho`,
which the server decodes before routing); the route's `path` parameter matches either.
`created` is when the mind's ledger was made (Unix seconds), read once per mind.
"""

from __future__ import annotations

import weakref
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool

from mindledger.service.endpoints import Call, Endpoint
from mindledger.service.errors import ApiError

if TYPE_CHECKING:
    from mindledger.service.app import Extension
    from mindledger.service.minds import Minds, ServedMind

PREFIX = "mind/"
MODEL: dict[str, Any] = {
    "type": "object",
    "required": ["id", "object", "created", "owned_by"],
    "properties": {
        "id": {"type": "string", "description": "mind/<name>"},
        "object": {"const": "model"},
        "created": {"type": "integer", "description": "When the mind's ledger was made."},
        "owned_by": {"type": "string"},
    },
}
_created: weakref.WeakKeyDictionary[ServedMind, int] = weakref.WeakKeyDictionary()


def _ledger_created(mind: ServedMind) -> int:
    """When the mind's ledger was made, in Unix seconds (0 for a ledger that never said)."""
    made = mind.status().created_at
    return int(datetime.fromisoformat(made).timestamp()) if made else 0


async def model_object(mind: ServedMind) -> dict[str, Any]:
    """The mind as OpenAI describes a model."""
    if mind not in _created:
        _created[mind] = await run_in_threadpool(_ledger_created, mind)
    return {
        "id": PREFIX + mind.name,
        "object": "model",
        "created": _created[mind],
        "owned_by": "mindledger",
    }


async def retrieve_model(call: Call) -> Any:
    model = call.request.path_params["model"]
    mind = next((m for m in call.opened if PREFIX + m.name == model), None)
    if mind is None:
        raise ApiError(
            404,
            "model_not_found",
            f"the model {model!r} does not exist or this key does not open it "
            "(GET /v1/models lists them)",
            param="model",
        )
    return await model_object(mind)


def extension(minds: Minds) -> Extension:
    """`GET /v1/models/{model}` on the server."""
    from mindledger.service.app import Extension

    return Extension(
        endpoints=[
            Endpoint(
                "GET",
                "/v1/models/{model:path}",
                retrieve_model,
                "OpenAI-compatible: one model, mind/<name> (the slash escaped or not); 404 "
                "model_not_found for a mind this token does not open.",
                tags=("openai",),
                result=MODEL,
            )
        ]
    )
