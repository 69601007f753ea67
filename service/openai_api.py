"""The OpenAI-compatible endpoint: each mind a token opens is a model `mind/<name>`.

`POST /v1/chat/completions`: the last message, the user's, is the turn's text; the client's
system (or developer) messages are its system prompt, sent after the mind's own; its earlier
user and assistant messages are the conversation the model sees before it; its sampling
settings (`temperature`, `top_p`, `max_tokens`, `stop`, `seed`, ...) and its `tools`,
`tool_choice`, `parallel_tool_calls` and `response_format` go to the model (refused for a
model that cannot take them); all of it is recorded with the turn (service/chat_request.py
reads the request: a field a turn cannot honour, or one OpenAI's API does not define, is
refused with a 400 naming it, never ignored). The answer is the turn's visible reply with
`usage`, and the turn record (`mind turn --json`) rides along as `mind_turn`. A reply that
calls tools answers `tool_calls` (finish_reason "tool_calls") and completes its turn; the
tool messages that end the next request's messages are that turn's message, linked to the
turn that asked. `stream: true` answers OpenAI's chunk events (tool calls as pieces once the
turn is recorded; the turn record on the finish chunk; with `stream_options.include_usage`,
the usage on a last chunk with no choice, as OpenAI sends it) and `data: [DONE]`, once the
turn has begun: a request refused before then is a 400, never a stream. Extra body field
`mind_options` (`model`, `mock_reply`, `api_base`, `budget`) chooses the turn's model as
`mind turn` flags do. Errors come in OpenAI's shape: `{"error": {"message", "type", "param",
"code"}}`. A client's retry (its `Idempotency-Key`, or the SDKs'
`x-stainless-retry-count` with the same body) is another attempt of the same turn or its
recorded answer, never a second turn (service/turn_answers.py: a failed model's status).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from mindledger.domain.errors import MindError
from mindledger.service.chat_request import PREFIX, ChatRequest, chat_request
from mindledger.service.endpoints import Call, Endpoint, read_json
from mindledger.service.errors import ApiError, error_body, mind_error_response
from mindledger.service.turn_answers import (
    REPLAYED,
    failed_turn,
    failed_turn_response,
    turn_request,
)

if TYPE_CHECKING:
    from mindledger.service.app import Extension
    from mindledger.service.minds import Minds, ServedMind, TurnDone
    from mindledger.turn_attempts import TurnRequest

__all__ = ["PREFIX", "extension", "openai_error"]


def openai_error(status: int, code: str, message: str) -> JSONResponse:
    """An error response as OpenAI answers one (every route's shape: service/errors.py)."""
    return JSONResponse(error_body(status, code, message), status)


async def list_models(call: Call) -> Any:
    from mindledger.service.openai_models import model_object

    return {"object": "list", "data": [await model_object(m) for m in call.opened]}


def _the_mind(call: Call, model: Any) -> ServedMind:
    if not isinstance(model, str) or not model.startswith(PREFIX):
        raise ApiError(400, "model_not_found", f"model must be {PREFIX}<name> (GET /v1/models)")
    name = model.removeprefix(PREFIX)
    mind = next((m for m in call.opened if m.name == name), None)
    if mind is None:
        raise ApiError(
            404,
            "model_not_found",
            f"no model {model!r} for this key (GET /v1/models lists them)",
            "model",
        )
    return mind


def _refused(
    e: MindError, call: Call, mind: ServedMind | None, request: ChatRequest | None
) -> JSONResponse:
    """A floor's refusal, its argument named as the request's field."""
    if request is not None:
        e.param = request.request_field(e.param)
        worded = request.request_words(str(e))
        if worded != str(e):
            e.args = (worded,)
    home = mind.home.path if mind is not None else None
    return mind_error_response(e, mind_secrets(call), home)


async def chat_completions(call: Call) -> Response:
    from mindledger.service.http_api import in_turn_thread

    mind: ServedMind | None = None
    request: ChatRequest | None = None
    try:
        raw = await read_json(call.request, call.max_body)
        request = chat_request(raw)
        mind = _the_mind(call, request.model)
        # A client's retry of this very request is another attempt of its turn, never a new
        # turn (mindledger.turn_attempts).
        asked = turn_request(call.request.headers, raw)
        if request.stream:
            return await _streamed(call, mind, request, asked)
        turn, served = request, mind
        attempt = await in_turn_thread(
            call, lambda: served.attempt_turn(asked, turn.text, turn.turn_args())
        )
    except ApiError as e:
        return JSONResponse(error_body(e.status, e.code, e.message, e.param), e.status)
    except MindError as e:
        return _refused(e, call, mind, request)
    if attempt.done.outcome.status == "failed":
        return failed_turn_response(attempt.done.data)
    headers = REPLAYED if attempt.replayed else None
    return JSONResponse(_completion(attempt.done, request.model), headers=headers)


def mind_secrets(call: Call) -> list[str]:
    """Every served mind's secrets and tokens (redacted from what is answered)."""
    return [s for m in call.minds for s in (m.token, *m.secrets)]


def _finish(done: TurnDone) -> str:
    if done.outcome.tool_calls:
        return "tool_calls"
    return "length" if done.outcome.cut_off else "stop"


def _message(done: TurnDone) -> dict[str, Any]:
    """The reply as OpenAI's assistant message (text null when it only calls tools)."""
    calls = done.outcome.tool_calls
    if not calls:
        return {"role": "assistant", "content": done.data["reply"]}
    return {"role": "assistant", "content": done.data["reply"] or None, "tool_calls": calls}


def _call_pieces(done: TurnDone) -> list[dict[str, Any]]:
    """The reply's tool calls as a stream's deltas: each call named, then its arguments."""
    pieces: list[dict[str, Any]] = []
    for index, call in enumerate(done.outcome.tool_calls):
        function = call["function"]
        named = {"name": function["name"], "arguments": ""}
        pieces.append({"index": index, "id": call["id"], "type": "function", "function": named})
        if function["arguments"]:
            pieces.append({"index": index, "function": {"arguments": function["arguments"]}})
    return pieces


def _completion(done: TurnDone, model: str) -> dict[str, Any]:
    usage = done.data["usage"]
    return {
        "id": f"chatcmpl-{done.data['turn']}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": _message(done),
                "finish_reason": _finish(done),
            }
        ],
        "usage": {
            k: usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")
        },
        "mind_turn": done.data,
    }


def _chunk(turn_id: str, model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{turn_id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _data(payload: Any) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


async def _streamed(
    call: Call, mind: ServedMind, request: ChatRequest, asked: TurnRequest
) -> Response:
    """OpenAI's chunk stream: the role, the visible reply as it comes, the finish with usage
    and `mind_turn`, `[DONE]`. The turn runs in the turn workers whatever the client does.
    The answer waits for the turn's first news: a refusal (the floor checks every argument
    before it records anything) or a failed generation before any text is an error response
    with its status, never a stream that carries an error."""
    from mindledger.service.turn_stream import first_news, listeners

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    secrets = mind_secrets(call)

    def put(kind: str, data: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, data))

    def run() -> None:
        from mindledger.service.errors import internal_error_message

        home = mind.home.path
        try:
            args = {**request.turn_args(), **listeners(put)}
            attempt = mind.attempt_turn(asked, request.text, args)
            done = attempt.done
            if attempt.replayed:  # answered from the record: its reply, whole
                put("start", done.data["turn"])
                put("delta", done.data["reply"])
        except MindError as e:
            put("refused", e)
        except Exception as e:  # a thread boundary: logged, reported as one line, never lost
            message = internal_error_message(e, secrets, home, "the turn failed on the server")
            put("error", {"message": message, "code": "internal"})
        else:
            put("done", done)

    call.minds.turn_pool.submit(run)
    *first, turn = await first_news(queue)
    if first[0] == "refused":
        return _refused(first[1], call, mind, request)
    if first[0] == "error":
        return openai_error(500, first[1]["code"], first[1]["message"])
    if first[0] == "done" and first[1].outcome.status == "failed":
        return failed_turn_response(first[1].data)
    # Named after its turn, as a whole answer is (the floor said which once it was recorded).
    stream_id = turn or (first[1].data["turn"] if first[0] == "done" else uuid.uuid4().hex)
    model = request.model

    async def chunks() -> AsyncIterator[bytes]:
        yield _data(_chunk(stream_id, model, {"role": "assistant", "content": ""}, None))
        kind, data = first
        while True:
            if kind == "delta":
                yield _data(_chunk(stream_id, model, {"content": data}, None))
                kind, data = await queue.get()
                continue
            if kind == "error":
                error = {"message": data["message"], "type": "server_error", "param": None}
                yield _data({"error": {**error, "code": data["code"]}})
            elif kind == "refused":  # after text was sent: no longer a status to give
                from mindledger.error_report import failure_message
                from mindledger.service.clients import shows_paths

                full = shows_paths()
                shown = failure_message(data, mind.home.path, secrets, full_path=full)
                message = " ".join(shown.split())
                error = {"message": message, "type": "server_error", "param": None}
                yield _data({"error": {**error, "code": "invalid_request"}})
            elif data.outcome.status == "failed":
                yield _data(failed_turn(data.data)[1])
            else:
                for piece in _call_pieces(data):
                    yield _data(_chunk(stream_id, model, {"tool_calls": [piece]}, None))
                final = _chunk(stream_id, model, {}, _finish(data))
                final["mind_turn"] = data.data
                yield _data(final)
                if request.include_usage:  # as OpenAI sends it: a last chunk with no choice
                    usage = {**_chunk(stream_id, model, {}, None), "choices": []}
                    usage["usage"] = _completion(data, model)["usage"]
                    yield _data(usage)
            yield b"data: [DONE]\n\n"
            return

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(chunks(), media_type="text/event-stream", headers=headers)


# OpenAI's shapes for the OpenAPI document (what these routes answer is OpenAI's, not a floor
# result; `mind_turn` is the turn as `mind turn --json` prints it).
MODELS = {
    "type": "object",
    "required": ["object", "data"],
    "properties": {
        "object": {"const": "list"},
        "data": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "object", "created", "owned_by"],
                "properties": {
                    "id": {"type": "string"},
                    "object": {"const": "model"},
                    "created": {"type": "integer"},
                    "owned_by": {"type": "string"},
                },
            },
        },
    },
}
COMPLETION = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices", "usage", "mind_turn"],
    "properties": {
        "id": {"type": "string"},
        "object": {"const": "chat.completion"},
        "created": {"type": "integer"},
        "model": {"type": "string"},
        "choices": {"type": "array", "items": {"type": "object"}},
        "usage": {"type": "object"},
        "mind_turn": {"type": "object"},
    },
}


def extension(minds: Minds) -> Extension:
    """`GET /v1/models` and `POST /v1/chat/completions` on the server."""
    from mindledger.service import openai_bodies
    from mindledger.service.app import Extension
    from mindledger.service.turn_answers import RETRY_HEADERS

    return Extension(
        endpoints=[
            Endpoint(
                "GET",
                "/v1/models",
                list_models,
                "OpenAI-compatible: the minds this token opens, as models mind/<name>.",
                tags=("openai",),
                result=MODELS,
            ),
            Endpoint(
                "POST",
                "/v1/chat/completions",
                chat_completions,
                "OpenAI-compatible chat: the last user message (or the tool results that end "
                "the messages) is a turn of mind/<name>; `tools` and `response_format` pass to "
                "a model that takes them; `stream` answers chunk events; the turn record is in "
                "`mind_turn`; extra field `mind_options` {model, mock_reply, api_base, budget}.",
                streams=True,
                tags=("openai",),
                result=COMPLETION,
                headers=RETRY_HEADERS,
                own_body=openai_bodies.chat_body,
            ),
        ]
    )
