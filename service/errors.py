"""JSON errors: every failure a client sees, on every route, is OpenAI's shape
`{"error": {"message", "type", "param", "code"}}` with a 4xx/5xx status and one line naming the
problem; never a traceback. The floor's error kinds map to a status here, in one place."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse

from mindledger.error_report import (
    clean_text,
    failure_message,
    first_line,
    was_disk_full,
    was_unavailable,
)
from mindledger.errors import (
    ConflictError,
    LedgerBusyError,
    LedgerCorruptError,
    LedgerReadOnlyError,
    MindError,
    NotFoundError,
    NotInitialisedError,
    ProjectionError,
    QueryError,
    QueryStoppedError,
    ReadModelCorruptError,
    UnavailableError,
    UnsupportedParameterError,
)
from mindledger.service.clients import shows_paths
from mindledger.turn_attempts import IdempotencyKeyReusedError

log = logging.getLogger("mindledger.server")
# A full disk (or the file size limit): nothing could be written, and the client's command line
# prints the message as the in-process command does (`cli.server_client`).
INSUFFICIENT_STORAGE = 507


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


UNAVAILABLE_RETRY_S = 1  # PostgreSQL back after a restart: seconds, not minutes

# Domain errors a client caused, by the status and code they answer with (first match wins).
_MAPPED: list[tuple[type[Exception], int, str]] = [
    # A client's idempotency key sent again with another request (as the IETF draft answers).
    (IdempotencyKeyReusedError, 422, "idempotency_key_reused"),
    (QueryStoppedError, 422, "query_stopped"),
    (NotInitialisedError, 404, "not_initialised"),
    (LedgerBusyError, 503, "busy"),
    (LedgerReadOnlyError, 409, "read_only_home"),
    (LedgerCorruptError, 500, "ledger_corrupt"),
    (ReadModelCorruptError, 500, "read_model_corrupt"),
    # The append guard's refusal (a ledger event this mindledger cannot project): a known
    # refusal with nothing written, which the command line runs in-process to the same line.
    (ProjectionError, 409, "projection_stopped"),
    (UnsupportedParameterError, 400, "unsupported_parameter"),
    # The kinds (mindledger.domain.errors): what is left of each maps here.
    (NotFoundError, 404, "not_found"),
    (ConflictError, 409, "conflict"),
    (UnavailableError, 503, "unavailable"),
]


def mind_error_body(
    e: MindError, secrets: Sequence[str], home: Path | None = None
) -> tuple[int, dict[str, Any]]:
    """A MindError's status and body: a client's mistake is 4xx with the message
    (`failure_message`: secrets redacted, a cause's first line at most; with `home`, what was
    left out is logged there under an error id the message names) and the argument at fault as
    `param` (the floor's request word, which is the route's JSON field)."""
    message = failure_message(e, home, secrets, full_path=shows_paths())
    if was_disk_full(e, home):
        status, code, param = INSUFFICIENT_STORAGE, "insufficient_storage", None
    elif isinstance(e, QueryError) and "refused" in message:
        status, code, param = 403, "read_only", None
    else:
        status, code = next(
            ((s, c) for kind, s, c in _MAPPED if isinstance(e, kind)), (400, "bad_request")
        )
        param = e.param
    return status, error_body(status, code, message, param)


def mind_error_response(
    e: MindError, secrets: Sequence[str], home: Path | None = None
) -> JSONResponse:
    """A MindError as JSON (`mind_error_body`)."""
    status, body = mind_error_body(e, secrets, home)
    return JSONResponse(body, status)


def internal_error_message(
    e: BaseException,
    secrets: Sequence[str],
    home: Path | None = None,
    words: str = "the server failed to answer",
) -> str:
    """An unexpected failure: one redacted line in the server's log, the traceback in `home`'s
    errors log (when there is a home); what the client is told (`words`, and the error id)."""
    log.error("internal error: %s: %s", type(e).__name__, clean_text(first_line(str(e)), secrets))
    if home is None:
        return f"{words}; see its log"
    return failure_message(e, home, secrets, unexpected=words, cause=False, full_path=shows_paths())


def internal_error_response(
    e: BaseException, secrets: Sequence[str], home: Path | None = None
) -> JSONResponse:
    """An unexpected failure answered with a plain 500 (`internal_error_message`); a full disk
    with 507 and the line that says so."""
    if was_disk_full(e, home):
        message = failure_message(e, home, secrets, full_path=shows_paths())
        return error_response(INSUFFICIENT_STORAGE, "insufficient_storage", message)
    if was_unavailable(e):  # PostgreSQL restarting: the clients' retry is the remedy
        message = failure_message(e, home, secrets, full_path=shows_paths())
        return error_response(
            503, "unavailable", message, {"Retry-After": str(UNAVAILABLE_RETRY_S)}
        )
    return error_response(500, "internal", internal_error_message(e, secrets, home))
