"""JSON errors: every failure a client sees is `{"error": {"code", "message"}}` with a 4xx/5xx
status and one line naming the problem; never a traceback."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from starlette.responses import JSONResponse

from mindledger.domain import errors as domain
from mindledger.domain.redaction import redact
from mindledger.projections.queries.analytics import QueryError, QueryStoppedError

log = logging.getLogger("mindledger.server")


class ApiError(Exception):
    """Raised when a request cannot be served; carries the HTTP status and the error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The one error shape (the message kept to one line)."""
    line = " ".join(message.split())
    return JSONResponse({"error": {"code": code, "message": line}}, status, headers=headers)


# Domain errors a client caused, by the status and code they answer with (first match wins).
_MAPPED: list[tuple[type[Exception], int, str]] = [
    (QueryStoppedError, 422, "query_stopped"),
    (domain.NotInitialisedError, 404, "not_initialised"),
    (domain.UnknownCommitmentError, 404, "not_found"),
    (domain.UnknownConceptError, 404, "not_found"),
    (domain.UnknownThreadError, 404, "not_found"),
    (domain.LedgerBusyError, 503, "busy"),
    (domain.LedgerReadOnlyError, 409, "read_only_home"),
    (domain.LedgerCorruptError, 500, "ledger_corrupt"),
    (domain.ReadModelCorruptError, 500, "read_model_corrupt"),
]


def mind_error_response(e: domain.MindError, secrets: Sequence[str]) -> JSONResponse:
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
