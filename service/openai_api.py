"""The OpenAI-compatible endpoint: each mind a token opens is a model `mind/<name>`.

`POST /v1/chat/completions`: the last user message is the turn's text (earlier messages are
ignored: the mind's memory is its ledger); the answer is the turn's visible reply with `usage`,
and the turn record (`mind turn --json`) rides along as `mind_turn`. `stream: true` answers
OpenAI's chunk events and `data: [DONE]`. Extra body field `mind_options` (`model`,
`mock_reply`, `api_base`, `budget`) chooses the turn's model as `mind turn` flags do. Errors come
in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from mindledger.domain.errors import MindError
from mindledger.service.endpoints import Call, Endpoint, read_json
from mindledger.service.errors import ApiError, error_body

if TYPE_CHECKING:
    from mindledger.service.app import Extension
    from mindledger.service.minds import Minds, ServedMind, TurnDone

PREFIX = "mind/"
OPTIONS = {"model": str, "mock_reply": str, "api_base": str, "budget": int}


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
            404, "model_not_found", f"no model {model!r} for this key (GET /v1/models lists them)"
        )
    return mind


def refuse_unsupported(body: dict[str, Any]) -> None:
    """What a turn cannot honour is refused, never silently ignored: several choices, tools
    (the mind acts through its own control lines), a structured response format."""
    n = body.get("n", 1)
    if n is not None and (n != 1 or isinstance(n, bool)):
        raise ApiError(400, "unsupported_parameter", "n must be 1: a turn gives one reply")
    for name in ("tools", "functions", "tool_choice", "function_call"):
        if body.get(name) not in (None, [], "none"):
            raise ApiError(
                400, "unsupported_parameter", f"{name} is not supported: a mind has no tools here"
            )
    kind = body.get("response_format")
    if kind is not None and kind != {"type": "text"}:
        raise ApiError(
            400, "unsupported_parameter", 'response_format must be {"type": "text"} (or absent)'
        )


def last_user_text(messages: Any) -> str:
    """The text of the last user message (a string, or the text parts of a list)."""
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "invalid_messages", "messages must be a non-empty array")
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                if not all(
                    isinstance(p, dict)
                    and p.get("type") == "text"
                    and isinstance(p.get("text"), str)
                    for p in content
                ):
                    raise ApiError(
                        400, "unsupported_content", "a user message's parts must all be text"
                    )
                return "".join(p["text"] for p in content)
            raise ApiError(400, "invalid_messages", "a user message's content must be text")
    raise ApiError(400, "invalid_messages", "messages hold no user message")


def turn_options(body: dict[str, Any]) -> dict[str, Any]:
    """`mind_options` checked: the turn's model choice, as `mind turn` takes it."""
    given = body.get("mind_options") or {}
    if not isinstance(given, dict):
        raise ApiError(400, "invalid_mind_options", "mind_options must be an object")
    options: dict[str, Any] = {}
    for key, value in given.items():
        kind = OPTIONS.get(key)
        if kind is None:
            allowed = ", ".join(OPTIONS)
            raise ApiError(400, "invalid_mind_options", f"unknown mind_options {key!r} ({allowed})")
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ApiError(400, "invalid_mind_options", f"mind_options {key!r}: wrong type")
        options[key] = value
    return options


async def chat_completions(call: Call) -> Response:
    from mindledger.service.http_api import in_turn_thread

    mind: ServedMind | None = None
    try:
        body = await read_json(call.request, call.max_body)
        if not isinstance(body, dict):
            raise ApiError(400, "bad_request", "the body must be a JSON object")
        mind = _the_mind(call, body.get("model"))
        refuse_unsupported(body)
        text = last_user_text(body.get("messages"))
        options = turn_options(body)
        if body.get("stream") is True:
            return _streamed(call, mind, body["model"], text, options)
        done = await in_turn_thread(call, lambda: mind.run_turn(text, **options))
    except ApiError as e:
        return JSONResponse(error_body(e.status, e.code, e.message, e.param), e.status)
    except MindError as e:
        from mindledger.error_report import failure_message

        home = mind.home.path if mind is not None else None
        message = failure_message(e, home, mind_secrets(call), full_path=False)
        return openai_error(400, "invalid_request", message)
    if done.outcome.status == "failed":
        return _failed(done)
    return JSONResponse(_completion(done, body["model"]))


def mind_secrets(call: Call) -> list[str]:
    """Every served mind's secrets and tokens (redacted from what is answered)."""
    return [s for m in call.minds for s in (m.token, *m.secrets)]


def _finish(done: TurnDone) -> str:
    return "length" if done.outcome.cut_off else "stop"


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
                "message": {"role": "assistant", "content": done.data["reply"]},
                "finish_reason": _finish(done),
            }
        ],
        "usage": {
            k: usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")
        },
        "mind_turn": done.data,
    }


def _failure_message(data: dict[str, Any]) -> str:
    failure = data.get("failure") or {}
    return (
        f"generation failed ({failure.get('kind')}): {failure.get('message')}; "
        f"the message is kept at position {data['events']['first']}"
    )


def _failed(done: TurnDone) -> JSONResponse:
    body = error_body(502, "model_failed", _failure_message(done.data))
    return JSONResponse({**body, "mind_turn": done.data}, 502)


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


def _streamed(
    call: Call, mind: ServedMind, model: str, text: str, options: dict[str, Any]
) -> StreamingResponse:
    """OpenAI's chunk stream: the role, the visible reply as it comes, the finish with usage
    and `mind_turn`, `[DONE]`. The turn runs in the turn workers whatever the client does."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    secrets = mind_secrets(call)

    def put(kind: str, data: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, data))

    def run() -> None:
        from mindledger.error_report import failure_message
        from mindledger.service.errors import internal_error_message

        home = mind.home.path
        try:
            done = mind.run_turn(text, on_delta=lambda piece: put("delta", piece), **options)
        except MindError as e:
            message = " ".join(failure_message(e, home, secrets, full_path=False).split())
            put("error", {"message": message, "code": "invalid_request"})
        except Exception as e:  # a thread boundary: logged, reported as one line, never lost
            message = internal_error_message(e, secrets, home, "the turn failed on the server")
            put("error", {"message": message, "code": "internal"})
        else:
            put("done", done)

    call.minds.turn_pool.submit(run)
    stream_id = f"{int(time.time() * 1000):x}"

    async def chunks() -> AsyncIterator[bytes]:
        yield _data(_chunk(stream_id, model, {"role": "assistant", "content": ""}, None))
        while True:
            kind, data = await queue.get()
            if kind == "delta":
                yield _data(_chunk(stream_id, model, {"content": data}, None))
                continue
            if kind == "error":
                error = {"message": data["message"], "type": "server_error", "param": None}
                yield _data({"error": {**error, "code": data["code"]}})
            elif data.outcome.status == "failed":
                message = _failure_message(data.data)
                error = {"message": message, "type": "server_error", "param": None}
                yield _data({"error": {**error, "code": "model_failed"}, "mind_turn": data.data})
            else:
                final = _chunk(stream_id, model, {}, _finish(data))
                final["usage"] = _completion(data, model)["usage"]
                final["mind_turn"] = data.data
                yield _data(final)
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
    from mindledger.service.app import Extension

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
                "OpenAI-compatible chat: the last user message is a turn of mind/<name>; "
                "`stream` answers chunk events; the turn record is in `mind_turn`; extra field "
                "`mind_options` {model, mock_reply, api_base, budget}.",
                streams=True,
                tags=("openai",),
                result=COMPLETION,
            ),
        ]
    )
