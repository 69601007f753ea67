"""The /v1 JSON API: each handler calls one use case on the served mind, in a worker thread
(`mind.aio`), and answers with its result's JSON: what the matching CLI command prints with
`--json`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import anyio.to_thread
from starlette.responses import Response, StreamingResponse

from mindledger.domain.budgets import DEFAULT_BUDGET, MAX_BUDGET, RECALL_BUDGET_FLOOR
from mindledger.domain.errors import MindError
from mindledger.ledger_reads import KINDS
from mindledger.service.endpoints import Call, Endpoint, JsonResponse, Param
from mindledger.service.errors import ApiError
from mindledger.turn_attempts import TurnRequest
from mindledger.turn_refs import TURN_REF

T = TypeVar("T")


async def in_thread(fn: Callable[[], T]) -> T:
    """Run a blocking read in the shared worker threads (reads run concurrently)."""
    return await anyio.to_thread.run_sync(fn)


async def in_turn_thread(call: Call, fn: Callable[[], T]) -> T:
    """Run a turn in the turn workers: if the client goes away the await is cancelled, the
    thread is not, so the turn finishes and is recorded whole."""
    future = call.minds.turn_pool.submit(fn)
    return await asyncio.wrap_future(future)


def sse(event: str, data: Any, event_id: int | None = None) -> bytes:
    """One server-sent event (the data as one line of JSON, escaped as the CLI escapes)."""
    from mindledger.safe_text import json_text

    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json_text(data, indent=None)}\n\n".encode()


# -- minds and turns ------------------------------------------------------------------------


async def list_minds(call: Call) -> Any:
    return [{"name": m.name} for m in call.opened]


def _sampling_named(e: MindError, body: dict[str, Any]) -> MindError:
    """A refusal of a sampling setting (or of an unknown name in `sampling`) names the body's
    field (`sampling.temperature`)."""
    from mindledger.domain.sampling import NAMES

    given = body.get("sampling") or {}
    if e.param in NAMES or (e.param in given and e.param not in body):
        e.param = f"sampling.{e.param}"
    return e


async def turn(call: Call) -> Any:
    from mindledger.service.turn_answers import REPLAYED, failed_turn_response, turn_request

    body = call.body
    mind = call.the_mind
    kwargs: dict[str, Any] = {
        "model": body.get("model"),
        "mock_reply": body.get("mock_reply"),
        "api_base": body.get("api_base"),
        "budget": body.get("budget", DEFAULT_BUDGET),
        "system": body.get("system"),
        "sampling": body.get("sampling"),
    }
    # A client's retry of this very request is another attempt of its turn, never a new turn.
    asked = turn_request(call.request.headers, body)
    if body.get("stream"):
        return await _streamed_turn(call, body, kwargs, asked)
    try:
        attempt = await in_turn_thread(call, lambda: mind.attempt_turn(asked, body["text"], kwargs))
    except MindError as e:
        raise _sampling_named(e, body) from None
    if attempt.done.outcome.status == "failed":
        return failed_turn_response(attempt.done.data)
    return JsonResponse(attempt.done.data, headers=REPLAYED if attempt.replayed else None)


async def _streamed_turn(
    call: Call, body: dict[str, Any], kwargs: dict[str, Any], asked: TurnRequest
) -> Response:
    """The turn's reply as it comes (`delta`), then the turn (`turn`) or the one error shape
    (`error`, a failed turn's record as `mind_turn`). The answer waits for the turn's first
    news, as chat completions' does (service/turn_stream.py): a refusal (the floor checks every
    argument before it records anything) is the error response a whole turn's would be, never
    a 200 with an error event."""
    from mindledger.service.turn_stream import first_news, listeners

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    mind = call.the_mind

    def put(kind: str, data: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, data))

    def run() -> None:
        from mindledger.service.errors import error_body, internal_error_message
        from mindledger.service.turn_answers import failed_turn

        home = mind.home.path
        try:
            attempt = mind.attempt_turn(asked, body["text"], {**kwargs, **listeners(put)})
            done = attempt.done
            if attempt.replayed:  # answered from the record: its reply, whole
                put("start", done.data["turn"])
                put("delta", done.data["reply"])
        except MindError as e:
            put("refused", e)
        except Exception as e:  # a thread boundary: reported as an event, logged, never lost
            message = internal_error_message(e, mind.secrets, home, "the turn failed on the server")
            put("error", error_body(500, "internal", message))
        else:
            if done.outcome.status == "failed":  # recorded as failed: the error carries it
                put("error", failed_turn(done.data)[1])
            else:
                put("turn", done.data)

    call.minds.turn_pool.submit(run)  # runs to the end even when the client goes away
    kind, data, _ = await first_news(queue)
    if kind == "refused":  # the one error path, as the turn not streamed answers it
        raise _sampling_named(data, body)

    async def events() -> AsyncIterator[bytes]:
        nonlocal kind, data
        while kind == "delta":
            yield sse("delta", {"text": data})
            kind, data = await queue.get()
        if kind == "refused":  # after text was sent: no longer a status to give
            from mindledger.service.errors import mind_error_body

            refused = _sampling_named(data, body)
            yield sse("error", mind_error_body(refused, mind.secrets, mind.home.path)[1])
        else:  # the turn, or the one error shape (a failed turn's record as `mind_turn`)
            yield sse(kind, data)

    return StreamingResponse(events(), media_type="text/event-stream", headers=_NO_CACHE)


_NO_CACHE = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


# -- reads ----------------------------------------------------------------------------------


def _as_of(raw: str | None) -> Any:
    if raw is None:
        return None
    from mindledger.rules import UnreadableAsOfError, parse_as_of

    try:
        return parse_as_of(raw, "as_of")
    except UnreadableAsOfError as e:
        raise ApiError(400, "bad_request", f"as_of: {e}", "as_of") from None


async def recall(call: Call) -> Any:
    p, mind = call.params, call.the_mind
    as_of = _as_of(p.get("as_of"))
    return await mind.aio.recall(p["q"], p.get("budget", DEFAULT_BUDGET), as_of)


async def commitments(call: Call) -> Any:
    mind, closed = call.the_mind, call.params.get("all", False)
    return await mind.aio.commitments(closed)


async def threads(call: Call) -> Any:
    mind, resolved = call.the_mind, call.params.get("all", False)
    as_of = _as_of(call.params.get("as_of"))
    return await mind.aio.threads(resolved, as_of)


async def concepts(call: Call) -> Any:
    return await call.the_mind.aio.concepts()


async def identity(call: Call) -> Any:
    return await call.the_mind.aio.identity()


async def status(call: Call) -> Any:
    from mindledger.service.clients import for_client

    mind = call.the_mind
    shown = await mind.aio.status()
    # Where the mind lives, as the client is told the server's paths (errors and warnings too).
    return shown.model_copy(update={"home": for_client(shown.home, [mind.home.path])})


async def log(call: Call) -> Any:
    p, mind = call.params, call.the_mind
    if "turn" in p:
        return await mind.aio.turn_prompt(p["turn"])
    return await mind.aio.log(p.get("limit", 20), p.get("kind"))


async def verify(call: Call) -> Any:
    from mindledger.service.clients import data_for_client
    from mindledger.service.errors import error_body

    mind = call.the_mind
    data = await mind.aio.verify()
    # Its anchors name the home's files (ledger-head.json): told as the client is told paths.
    shown = data_for_client(data.model_dump(mode="json"), [mind.home.path])
    if data.ok:
        return shown
    # The one error shape, the check's result beside it (as a failed turn's record rides).
    where = f" at position {data.first_bad}" if data.first_bad is not None else ""
    message = f"the ledger fails verification{where}: {data.reason}"
    body = data_for_client(error_body(409, "verify_failed", message), [mind.home.path])
    return JsonResponse({**body, "mind_verify": shown}, 409)


async def query(call: Call) -> Any:
    from mindledger.service.clients import data_for_client

    body, mind = call.body, call.the_mind
    rows = await mind.aio.query(body["sql"], body.get("params", {}))
    # DuckDB names its file in its catalog and settings: rows told as the client is told paths.
    return data_for_client(rows.model_dump(mode="json"), [mind.home.path])


async def health(call: Call) -> Any:
    return {"ok": True}


MIND = "/v1/minds/{name}"


# What the two routes outside the floor answer, written out for the OpenAPI document.
HEALTH = {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}
MINDS = {
    "type": "array",
    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
}


def endpoints() -> list[Endpoint]:
    """The /v1 routes (the events stream lives in service/events_stream.py)."""
    from mindledger import results, results_ledger, results_listings
    from mindledger.service import bodies
    from mindledger.service.events_stream import events_endpoint
    from mindledger.service.forget_api import forget_endpoints
    from mindledger.service.knowledge_api import knowledge_endpoints
    from mindledger.service.owner_api import owner_endpoints
    from mindledger.service.turn_answers import RETRY_HEADERS

    read = ("reads",)
    return [
        Endpoint(
            "GET", "/healthz", health, "Liveness (no token needed).", auth=False, result=HEALTH
        ),
        Endpoint(
            "GET", "/v1/minds", list_minds, "The minds this token opens.", tags=read, result=MINDS
        ),
        Endpoint(
            "POST",
            f"{MIND}/turns",
            turn,
            "Run a turn: `mind turn --json`. A model failure is an error with the turn as "
            "`mind_turn`: 503 + Retry-After when a retry may pass, 4xx when not, else 502; a "
            "retry (`Idempotency-Key`, or `x-stainless-retry-count` with the same body) is "
            "another attempt of the same turn.",
            body=bodies.TurnBody,
            headers=RETRY_HEADERS,
            streams=True,
            tags=("turns",),
            result=results.TurnResult,
        ),
        Endpoint(
            "GET",
            f"{MIND}/recall",
            recall,
            "What the mind would remember: `mind recall --json`.",
            params=(
                Param("q", required=True, description="The query text."),
                Param(
                    "budget",
                    "integer",
                    minimum=RECALL_BUDGET_FLOOR,
                    maximum=MAX_BUDGET,
                    description=f"Token budget ({DEFAULT_BUDGET}).",
                ),
                Param("as_of", description="A ledger position or an ISO-8601 time."),
            ),
            tags=read,
            result=results.RecallResult,
        ),
        Endpoint(
            "GET",
            f"{MIND}/commitments",
            commitments,
            "`mind commitments --json`.",
            params=(Param("all", "boolean", description="Include closed ones."),),
            tags=read,
            result=results_listings.Commitments,
        ),
        Endpoint(
            "GET",
            f"{MIND}/threads",
            threads,
            "`mind threads --json`.",
            params=(
                Param("all", "boolean", description="Include resolved ones."),
                Param("as_of", description="A ledger position or an ISO-8601 time."),
            ),
            tags=read,
            result=results_listings.Threads,
        ),
        Endpoint(
            "GET",
            f"{MIND}/concepts",
            concepts,
            "`mind concepts --json`.",
            tags=read,
            result=results_listings.Concepts,
        ),
        Endpoint(
            "GET",
            f"{MIND}/identity",
            identity,
            "`mind identity --json`.",
            tags=read,
            result=results_listings.IdentityResult,
        ),
        Endpoint(
            "GET",
            f"{MIND}/status",
            status,
            "`mind status --json`.",
            tags=read,
            result=results_ledger.StatusResult,
        ),
        Endpoint(
            "GET",
            f"{MIND}/log",
            log,
            "`mind log --json` (with `turn`: `mind log --turn ID --json`).",
            params=(
                Param("limit", "integer", minimum=1, maximum=100_000, description="Default 20."),
                Param("kind", choices=KINDS, description="Only one aggregate kind."),
                Param("turn", description=TURN_REF),
            ),
            tags=read,
            result=results_ledger.Events | results_ledger.TurnPrompt,
        ),
        Endpoint(
            "POST",
            f"{MIND}/verify",
            verify,
            "`mind verify --json` (409 when the ledger fails: the error, the result as "
            "`mind_verify`).",
            body=bodies.NoBody,
            tags=read,
            result=results_ledger.VerifyResult,
        ),
        Endpoint(
            "POST",
            f"{MIND}/query",
            query,
            "Read-only SQL over the read models: `mind query --json` (403 for a write).",
            body=bodies.QueryBody,
            tags=read,
            result=results_ledger.QueryRows,
        ),
        events_endpoint(),
        *knowledge_endpoints(),
        *forget_endpoints(),
        *owner_endpoints(),
    ]
