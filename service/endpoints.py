"""The route table's vocabulary: an `Endpoint` declares its method, path, parameters, body and
handler once; the routes, their checks and the OpenAPI document are all made from it, so the
document cannot drift from what is served."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from mindledger.service.errors import ApiError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from mindledger.service.minds import Minds, ServedMind

DEFAULT_MAX_BODY = 1024 * 1024  # 1 MiB: a turn's text is at most a few hundred KiB
WARNINGS_HEADER = "Mind-Warnings"


def with_warnings(
    response: Response, lines: list[str], secrets: Sequence[str], homes: Sequence[Path] = ()
) -> Response:
    """`response` with the warnings its request heard (`mindledger.notices.heard`) in the
    `Mind-Warnings` header, a JSON list of lines (ASCII, so a header can hold it; secrets
    redacted; `homes` named within the home to a client elsewhere: `clients.for_client`),
    which the command line prints as the in-process command prints them."""
    if lines:
        from mindledger.domain.redaction import redact
        from mindledger.service.clients import for_client

        told = [for_client(redact(line, secrets), homes) for line in lines]
        response.headers[WARNINGS_HEADER] = json.dumps(told)
    return response


class JsonResponse(Response):
    """JSON written exactly as the command line's `--json` writes it (`cli.output.json_text`:
    the same escapes, the same rendering of times and decimals)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        from pydantic import BaseModel

        from mindledger.safe_text import json_text

        if isinstance(content, BaseModel):  # a floor result: its JSON dump, as `--json` prints
            content = content.model_dump(mode="json")
        return json_text(content, indent=None).encode("utf-8")


@dataclass(frozen=True)
class Param:
    """A query parameter: `kind` is "string", "integer" or "boolean"."""

    name: str
    kind: str = "string"
    required: bool = False
    description: str = ""
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()


@dataclass
class Call:
    """What a handler gets: the request, its checked query parameters and body, the mind the
    path names (None on routes without `{name}`), and the minds the token opens."""

    request: Request
    params: dict[str, Any]
    body: dict[str, Any]
    mind: ServedMind | None
    opened: list[ServedMind]
    minds: Minds
    max_body: int = DEFAULT_MAX_BODY  # `mind serve --max-body`, for handlers that read the body

    @property
    def the_mind(self) -> ServedMind:
        """The mind the path names (only on routes with `{name}`)."""
        assert self.mind is not None
        return self.mind


Handler = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True)
class Endpoint:
    """One route: a handler returning a Response, or data sent as JSON (200)."""

    method: str
    path: str
    handler: Handler
    summary: str
    params: tuple[Param, ...] = ()
    # The JSON body's model (service/bodies.py): it checks the body and the document
    # publishes its schema. `NoBody`: the route takes none (an empty object is allowed).
    body: type[BaseModel] | None = None
    # The body of a handler that reads its own (the OpenAI routes, by OpenAI's rules: see
    # service/openai_bodies.py), as the document publishes it; never checked against it here.
    own_body: Callable[[], type[BaseModel]] | None = None
    headers: tuple[Param, ...] = ()  # request headers it reads (documented; never required)
    auth: bool = True
    streams: bool = False  # may answer text/event-stream
    tags: tuple[str, ...] = ()
    open_query: bool = False  # unknown query parameters are ignored instead of refused
    responses: dict[str, str] = field(default_factory=dict)
    # What a 200 answers as JSON: the floor's result model (or a type pydantic can describe,
    # such as a union), or a JSON schema written out; the OpenAPI document publishes it.
    result: Any = None


_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


def check_params(request: Request, params: Sequence[Param], open_query: bool) -> dict[str, Any]:
    """The query parameters, converted; a missing, unknown or malformed one is a 400."""
    query = request.query_params
    known = {p.name for p in params}
    if not open_query:
        unknown = sorted({k for k in query if k not in known})
        if unknown:
            allowed = ", ".join(sorted(known)) or "none"
            raise ApiError(
                400,
                "unknown_parameter",
                f"unknown parameter {unknown[0]!r} (allowed: {allowed})",
                param=unknown[0],
            )
    values: dict[str, Any] = {}
    for p in params:
        if len(query.getlist(p.name)) > 1:
            raise ApiError(
                400, "bad_request", f"parameter {p.name!r} is given more than once", p.name
            )
        raw = query.get(p.name)
        if raw is None:
            if p.required:
                raise ApiError(400, "bad_request", f"parameter {p.name!r} is required", p.name)
            continue
        values[p.name] = _convert(p, raw)
    return values


def _convert(p: Param, raw: str) -> Any:
    if p.kind == "boolean":
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ApiError(400, "bad_request", f"parameter {p.name!r} must be true or false", p.name)
    if p.kind == "integer":
        text = raw.strip()
        if not (text.isascii() and text.lstrip("-").isdigit()) or len(text) > 19:
            raise ApiError(
                400, "bad_request", f"parameter {p.name!r} must be a whole number", p.name
            )
        return _in_range(p.name, int(text), p.minimum, p.maximum)
    if p.choices and raw not in p.choices:
        raise ApiError(
            400,
            "bad_request",
            f"parameter {p.name!r} must be one of {', '.join(p.choices)}",
            p.name,
        )
    return raw


def _in_range(name: str, value: int, low: int | None, high: int | None) -> int:
    if low is not None and value < low:
        raise ApiError(400, "bad_request", f"{name!r} must be at least {low}", name)
    if high is not None and value > high:
        raise ApiError(400, "bad_request", f"{name!r} must be at most {high}", name)
    return value


BODY_TIMEOUT_S = 30.0  # the longest a request body may take to arrive


async def read_json(request: Request, limit: int, optional: bool = False) -> Any:
    """The request's JSON body, refused past `limit` bytes (413) or when it is not JSON (400);
    `optional`: no body at all is an empty object."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "too_large", f"the body is over the limit of {limit} bytes")
    chunks, size = [], 0
    try:
        # A client that sends part of a body and stalls would hold its connection for ever.
        async with asyncio.timeout(BODY_TIMEOUT_S):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise ApiError(413, "too_large", f"the body is over the limit of {limit} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise ApiError(
            408, "body_timeout", f"the body did not arrive within {BODY_TIMEOUT_S:g} s"
        ) from None
    raw = b"".join(chunks)
    if not raw.strip():
        if optional:
            return {}
        raise ApiError(400, "bad_json", "the body is empty; send a JSON object")
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise ApiError(400, "bad_json", "the body is not UTF-8 JSON") from None
    except json.JSONDecodeError as e:
        raise ApiError(400, "bad_json", f"the body is not JSON ({e.msg} at {e.pos})") from None
    except RecursionError:
        raise ApiError(400, "bad_json", "the body is nested too deeply") from None
    except ValueError:  # an integer of more digits than Python turns into a number (4300)
        raise ApiError(400, "bad_json", "the body holds a number too long to read") from None
