"""JSON errors: every failure a client sees, on every route, is OpenAI's shape
`{"error": {"message", "type", "param", "code"}}` with a 4xx/5xx status and one line naming the
problem; never a traceback. The floor's error kinds map to a status here, in one place."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from starlette.responses import JSONResponse

from mindledger.domain.redaction import redact
from mindledger.errors import (
    ConflictError,
    LedgerBusyError,
    LedgerCorruptError,
    LedgerReadOnlyError,
    MindError,
    NotFoundError,
    NotInitialisedError,
    QueryError,
    QueryStoppedError,
    ReadModelCorruptError,
    UnavailableError,
)

log = logging.getLogger("mindledger.server")


class ApiError(Exception):
    """Raised when a request cannot be served; carries the HTTP status, the error code and the
    request field at fault (`param`, when one is)."""

    def __init__(self, status: int, code: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.param = status, code, message, param


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    """The one error shape, as OpenAI words one (the message kept to one line)."""
    kind = {401: "authentication_error", 403: "permission_error"}.get(
        status, "invalid_request_error" if status < 500 else "server_error"
    )
    line = " ".join(message.split())
    return {"error": {"message": line, "type": kind, "param": param, "code": code}}


def error_response(
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
    param: str | None = None,
) -> JSONResponse:
    """The one error shape as a response."""
    return JSONResponse(error_body(status, code, message, param), status, headers=headers)


# Domain errors a client caused, by the status and code they answer with (first match wins).
_MAPPED: list[tuple[type[Exception], int, str]] = [
    (QueryStoppedError, 422, "query_stopped"),
    (NotInitialisedError, 404, "not_initialised"),
    (LedgerBusyError, 503, "busy"),
    (LedgerReadOnlyError, 409, "read_only_home"),
    (LedgerCorruptError, 500, "ledger_corrupt"),
    (ReadModelCorruptError, 500, "read_model_corrupt"),
    # The kinds (mindledger.domain.errors): what is left of each maps here.
    (NotFoundError, 404, "not_found"),
    (ConflictError, 409, "conflict"),
    (UnavailableError, 503, "unavailable"),
]


def mind_error_response(e: MindError, secrets: Sequence[str]) -> JSONResponse:
    """A MindError as JSON: a client's mistake is 4xx with the message, secrets redacted."""
    message = redact(str(e), secrets)
    if isinstance(e, QueryError) and "refused" in message:
        return error_response(403, "read_only", message)
    for kind, status, code in _MAPPED:
        if isinstance(e, kind):
            return error_response(status, code, message)
    return error_response(400, "bad_request", message)


def internal_error_response(e: BaseException, secrets: Sequence[str]) -> JSONResponse:
    """An unexpected failure: logged here (one line, redacted), answered with a plain 500."""
    log.error("internal error: %s: %s", type(e).__name__, redact(str(e), secrets))
    return error_response(500, "internal", "the server failed to answer; see its log")
