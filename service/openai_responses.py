"""`POST /v1/responses`, OpenAI's Responses API (the OpenAI Agents SDK's default): the request
read as a turn of `mind/<name>` (service/responses_request.py), run as chat's is
(`MindLedger.attempt_turn`), answered as a `response` object whose output items are the
assistant's message (`output_text` is the visible reply) and, when the reply calls tools, a
`function_call` item per call (the call's id is the mind's; the next request's
`function_call_output` items are a turn linked to this one), with `usage` and the turn record as
`mind_turn`. `stream: true` answers the Responses event stream, numbered from 0:
`response.created`, `response.in_progress`; for the message (once it has text, or at the end
when nothing else is output) `response.output_item.added`, `response.content_part.added`, a
`response.output_text.delta` per piece, `response.output_text.done`,
`response.content_part.done`, `response.output_item.done`; for each tool call
`response.output_item.added`, `response.function_call_arguments.delta` and `.done`,
`response.output_item.done`; then `response.completed` (or `response.incomplete` when the model
was cut off, `response.failed` when the turn failed after its first text). A request refused
before the turn began is an error response (400 naming the field), never a stream; a failed
generation answers with its status and the record (service/turn_answers.py)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from mindledger.domain.errors import MindError
from mindledger.service.endpoints import Call, Endpoint, read_json
from mindledger.service.errors import ApiError, error_body
from mindledger.service.openai_api import _refused, _the_mind
from mindledger.service.responses_request import ResponsesRequest, responses_request
from mindledger.service.responses_tools import call_items, echoed
from mindledger.service.turn_answers import REPLAYED, failed_turn_response, turn_request
from mindledger.service.turn_stream import SSE_HEADERS, StreamError, streamed_turn
from mindledger.turn_attempts import TurnRequest

if TYPE_CHECKING:
    from mindledger.service.app import Extension
    from mindledger.service.minds import Minds, ServedMind, TurnDone


def _usage(done: TurnDone) -> dict[str, Any]:
    usage = done.data["usage"]
    given, made = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    return {
        "input_tokens": given,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": made,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.get("total_tokens", given + made),
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message(item_id: str, text: str | None, status: str) -> dict[str, Any]:
    """The output item: the assistant's message (no part yet while `text` is None)."""
    content = [] if text is None else [_text_part(text)]
    return {
        "type": "message",
        "id": item_id,
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _response(
    response_id: str, created: int, request: ResponsesRequest, status: str
) -> dict[str, Any]:
    """A `response` object with no output yet (as `response.created` sends it)."""
    sampling = request.sampling
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": request.instructions,
        "max_output_tokens": sampling.get("max_tokens"),
        "model": request.model,
        "output": [],
        "previous_response_id": None,
        "reasoning": None,
        "store": False,
        "temperature": sampling.get("temperature"),
        **echoed(request.tooling),
        "top_p": sampling.get("top_p"),
        "truncation": "disabled",
        "usage": None,
        "user": sampling.get("user"),
        "metadata": {},
    }


def _output(item_id: str, done: TurnDone, text: str, status: str) -> list[dict[str, Any]]:
    """The output items: the message (when it has text, or nothing else is output), then a
    `function_call` per tool call of the reply."""
    calls = call_items(done.outcome.tool_calls)
    message = [_message(item_id, text, status)] if text or not calls else []
    return message + calls


def _finished(
    base: dict[str, Any], item_id: str, done: TurnDone, text: str | None = None
) -> dict[str, Any]:
    """`base` with the turn's reply as its output, its status, usage and record."""
    cut = bool(done.outcome.cut_off)
    status = "incomplete" if cut else "completed"
    reply = done.data["reply"] if text is None else text
    return {
        **base,
        "status": status,
        "completed_at": None if cut else int(time.time()),
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "output": _output(item_id, done, reply, status),
        "usage": _usage(done),
        "mind_turn": done.data,
    }


async def responses(call: Call) -> Response:
    from mindledger.service.http_api import in_turn_thread

    mind: ServedMind | None = None
    request: ResponsesRequest | None = None
    try:
        raw = await read_json(call.request, call.max_body)
        request = responses_request(raw)
        mind = _the_mind(call, request.model)
        asked = turn_request(call.request.headers, raw)  # a retry: the same turn again
        if request.stream:
            return await _streamed(call, mind, request, asked)
        turn, served = request, mind
        created = int(time.time())
        attempt = await in_turn_thread(
            call, lambda: served.attempt_turn(asked, turn.text, turn.turn_args())
        )
        done = attempt.done
    except ApiError as e:
        return JSONResponse(error_body(e.status, e.code, e.message, e.param), e.status)
    except MindError as e:
        return _refused(e, call, mind, request)
    if done.outcome.status == "failed":
        return failed_turn_response(done.data)
    turn_id = done.data["turn"]
    base = _response(f"resp_{turn_id}", created, request, "completed")
    headers = REPLAYED if attempt.replayed else None
    return JSONResponse(_finished(base, f"msg_{turn_id}", done), headers=headers)


def _event(kind: str, number: int, **fields: Any) -> bytes:
    payload = {"type": kind, "sequence_number": number, **fields}
    return f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


async def _streamed(
    call: Call, mind: ServedMind, request: ResponsesRequest, asked: TurnRequest
) -> Response:
    created = int(time.time())
    news = await streamed_turn(call, mind, request, asked)
    if isinstance(news, Response):
        return news
    response_id, item_id = f"resp_{news.turn}", f"msg_{news.turn}"
    base = _response(response_id, created, request, "in_progress")
    where = {"item_id": item_id, "output_index": 0, "content_index": 0}

    async def events() -> AsyncIterator[bytes]:
        number = -1

        def event(kind: str, **fields: Any) -> bytes:
            nonlocal number
            number += 1
            return _event(kind, number, **fields)

        def opened() -> Iterator[bytes]:
            item = _message(item_id, None, "in_progress")
            yield event("response.output_item.added", output_index=0, item=item)
            yield event("response.content_part.added", **where, part=_text_part(""))

        yield event("response.created", response=base)
        yield event("response.in_progress", response=base)
        pieces: list[str] = []
        async for news_item in news:
            if isinstance(news_item, str):
                if not pieces:
                    for opening in opened():
                        yield opening
                pieces.append(news_item)
                yield event("response.output_text.delta", **where, delta=news_item, logprobs=[])
                continue
            text = "".join(pieces)
            if isinstance(news_item, StreamError):
                error = {"code": "server_error", "message": news_item.message}
                failed = {**base, "status": "failed", "error": error}
                failed["output"] = [_message(item_id, text, "incomplete")] if pieces else []
                if news_item.mind_turn is not None:
                    failed["mind_turn"] = news_item.mind_turn
                yield event("response.failed", response=failed)
                return
            finished = _finished(base, item_id, news_item, text)
            for index, item in enumerate(finished["output"]):
                if item["type"] == "message":
                    for closing in _message_done(event, item, text, where, bool(pieces), opened):
                        yield closing
                else:
                    for call_event in _call_events(event, index, item):
                        yield call_event
            ended = "completed" if finished["status"] == "completed" else "incomplete"
            yield event(f"response.{ended}", response=finished)

    return StreamingResponse(events(), media_type="text/event-stream", headers=SSE_HEADERS)


Event = Callable[..., bytes]


def _message_done(
    event: Event,
    item: dict[str, Any],
    text: str,
    where: dict[str, Any],
    was_opened: bool,
    opened: Callable[[], Iterator[bytes]],
) -> Iterator[bytes]:
    """The message's closing events (opened first when no text came: an empty reply)."""
    if not was_opened:
        yield from opened()
    yield event("response.output_text.done", **where, text=text, logprobs=[])
    yield event("response.content_part.done", **where, part=_text_part(text))
    yield event("response.output_item.done", output_index=0, item=item)


def _call_events(event: Event, index: int, item: dict[str, Any]) -> Iterator[bytes]:
    """A tool call's events: the item added with no arguments, its arguments, the item done."""
    added = {**item, "arguments": "", "status": "in_progress"}
    yield event("response.output_item.added", output_index=index, item=added)
    at = {"item_id": item["id"], "output_index": index}
    arguments, name = item["arguments"], item["name"]
    yield event("response.function_call_arguments.delta", **at, delta=arguments)
    yield event("response.function_call_arguments.done", **at, name=name, arguments=arguments)
    yield event("response.output_item.done", output_index=index, item=item)


RESPONSE = {
    "type": "object",
    "required": ["id", "object", "created_at", "status", "model", "output", "usage", "mind_turn"],
    "properties": {
        "id": {"type": "string"},
        "object": {"const": "response"},
        "created_at": {"type": "integer"},
        "status": {"enum": ["completed", "incomplete"]},
        "model": {"type": "string"},
        "output": {
            "type": "array",
            "items": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["type", "id", "status", "role", "content"],
                        "properties": {
                            "type": {"const": "message"},
                            "role": {"const": "assistant"},
                            "content": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                    {
                        "type": "object",
                        "required": ["type", "id", "call_id", "name", "arguments", "status"],
                        "properties": {
                            "type": {"const": "function_call"},
                            "id": {"type": "string"},
                            "call_id": {"type": "string"},
                            "name": {"type": "string"},
                            "arguments": {"type": "string"},
                            "status": {"type": "string"},
                        },
                    },
                ]
            },
        },
        "usage": {"type": "object"},
        "mind_turn": {"type": "object"},
    },
}


def extension(minds: Minds) -> Extension:
    """`POST /v1/responses` on the server."""
    from mindledger.service import openai_bodies
    from mindledger.service.app import Extension

    return Extension(
        endpoints=[
            Endpoint(
                "POST",
                "/v1/responses",
                responses,
                "OpenAI-compatible Responses API: `input` (a text, or message, function_call "
                "and function_call_output items) is a turn of mind/<name>, `instructions` its "
                "system prompt; function `tools` and `text.format` pass to a model that takes "
                "them, its calls come back as function_call items; `stream` answers the "
                "Responses events; the turn record is in `mind_turn`; no hosted tools, no "
                "previous_response_id; extra field `mind_options` as on chat.",
                streams=True,
                tags=("openai",),
                result=RESPONSE,
                own_body=openai_bodies.responses_body,
            )
        ]
    )
