"""What a turn's request says of itself (its idempotency key, whether the client marked it as a
retry) and how a failed turn is answered: the one error shape with the status a client's retry
logic expects. A model failure retrying may fix (unreachable, slow, rate limiting, failing) is a
503 with `Retry-After`, which the OpenAI SDKs retry; one it cannot (the provider refused the
request or the key) is a 4xx, which they do not; a bad answer from the model is a 502. The
failed turn's record rides along as `mind_turn`. Which is which is the floor's
(`mindledger.turn_attempts.failure_class`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from mindledger.service.auth import bearer
from mindledger.service.endpoints import Param
from mindledger.service.errors import error_body
from mindledger.turn_attempts import TurnRequest, failure_class

RETRY_AFTER_S = 1  # how soon a client may try a transiently failed turn again
# The header the OpenAI SDKs (Python, Node) set on each retry: 1, 2, ... (0 or absent: the first).
RETRY_COUNT = "x-stainless-retry-count"
REPLAYED = {"Idempotent-Replayed": "true"}  # an answer from the record of an earlier attempt

# The headers a turn's route reads, for the OpenAPI document.
RETRY_HEADERS = (
    Param(
        "Idempotency-Key",
        description="The same key with the same body is answered once: from the record when it "
        "completed, as another attempt of its turn when its model failed (422 with another body).",
    ),
    Param(
        RETRY_COUNT,
        description="Set by the OpenAI SDKs on a retry (1, 2, ...): with the same body as this "
        "token's last request, it is that request again, never a second turn.",
    ),
)

# A refused request by the failure's kind: its status and code.
_REFUSED = {
    "bad_request": (400, "model_refused_request"),
    "context_too_long": (400, "context_length_exceeded"),
    "auth": (424, "model_auth_failed"),
    "not_installed": (424, "model_not_installed"),
}


def turn_request(headers: Headers, body: Mapping[str, Any]) -> TurnRequest:
    """The request as the floor's retry memory sees it: caller, body, key, retry mark."""
    count = headers.get(RETRY_COUNT, "").strip()
    return TurnRequest(
        caller=bearer(headers.get("authorization")) or "",
        body=body,
        key=headers.get("idempotency-key"),
        retry=count.isdigit() and int(count) > 0,
    )


def failure_words(data: Mapping[str, Any]) -> str:
    """A failed turn's one line: what failed and where its message is kept."""
    failure = data.get("failure") or {}
    return (
        f"generation failed ({failure.get('kind')}): {failure.get('message')}; "
        f"the message is kept at position {data['events']['first']}"
    )


def failure_status(kind: str) -> tuple[int, str, dict[str, str]]:
    """A model failure's status, error code and headers, by whether a retry may help."""
    match failure_class(kind):
        case "transient":
            return 503, "model_unavailable", {"Retry-After": str(RETRY_AFTER_S)}
        case "refused":
            status, code = _REFUSED.get(kind, (400, "model_refused_request"))
            return status, code, {}
        case _:
            return 502, "model_failed", {}


def failed_turn(data: Mapping[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
    """A failed turn's status, error body (the turn as `mind_turn`) and headers."""
    status, code, headers = failure_status(str((data.get("failure") or {}).get("kind", "")))
    body = {**error_body(status, code, failure_words(data)), "mind_turn": dict(data)}
    return status, body, headers


def failed_turn_response(data: Mapping[str, Any]) -> JSONResponse:
    """`failed_turn` as a response."""
    status, body, headers = failed_turn(data)
    return JSONResponse(body, status, headers=headers)
