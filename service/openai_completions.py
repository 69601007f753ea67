"""`POST /v1/completions`, OpenAI's legacy completions (LlamaIndex's `OpenAILike` calls it by
default): the `prompt` (a text, or a list of one text) is a turn of `mind/<name>`, run as
chat's is (`MindLedger.run_turn`), and its visible reply is `choices[0].text`; `stream: true`
answers `text_completion` chunks and `data: [DONE]` (with `stream_options.include_usage`, the
usage on a last chunk with no choice). The sampling settings are chat's (checked by the
floor, a refusal naming the field); a field a turn cannot honour (`suffix`, `echo`,
`logprobs`, `best_of` or `n` over 1, `logit_bias`) or one OpenAI does not define is a 400
naming it, never ignored. `mind_options` chooses the turn's model as on chat; the turn record
rides along as `mind_turn`."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from mindledger.domain.errors import MindError
from mindledger.service.chat_request import ChatRequest, _options, _sampling, _stream
from mindledger.service.endpoints import Call, Endpoint, read_json
from mindledger.service.errors import ApiError, error_body
from mindledger.service.openai_api import _finish, _refused, _the_mind
from mindledger.service.openai_fields import known_fields, mind_model, neutral_only
from mindledger.service.turn_answers import REPLAYED, failed_turn_response, turn_request
from mindledger.service.turn_stream import SSE_HEADERS, StreamError, streamed_turn
from mindledger.turn_attempts import TurnRequest

if TYPE_CHECKING:
    from mindledger.service.app import Extension
    from mindledger.service.minds import Minds, ServedMind, TurnDone

# Legacy fields a turn honours only at the value that asks nothing of it (null always does).
NEUTRAL: dict[str, tuple[Any, ...]] = {
    "n": (1,),
    "best_of": (1,),
    "echo": (False,),
    "logprobs": (),
    "suffix": (),
    "logit_bias": ({},),
}
WHY = {
    "n": "n must be 1: a turn gives one reply",
    "best_of": "best_of must be 1: a turn gives one reply",
    "echo": "echo is not supported: the answer is the mind's reply alone",
    "logprobs": "logprobs is not supported by a mind's turn; leave it out",
    "suffix": "suffix is not supported: a turn replies, it does not fill in text",
}
OWN = ("model", "prompt", "stream", "stream_options", "mind_options")
# Sampling fields as chat's table (chat_request.SAMPLING, which `_sampling` reads) names them.
LEGACY_SAMPLING = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "user",
)
KNOWN = frozenset((*OWN, *LEGACY_SAMPLING, *NEUTRAL))


class CompletionRequest(ChatRequest):
    """A legacy completion request as the floor's turn takes it (the prompt is the text)."""

    def request_field(self, param: str | None) -> str | None:
        """The request field a floor argument came from (the turn's text is the prompt)."""
        return "prompt" if param == "text" else super().request_field(param)


def _prompt(prompt: Any) -> str:
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if isinstance(prompt, str):
        if not prompt.strip():
            raise ApiError(400, "invalid_prompt", "prompt is empty; give some text", "prompt")
        return prompt
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        why = "prompt holds several texts: a turn gives one reply; send one per request"
    elif isinstance(prompt, list) and prompt:
        why = "prompt as token ids is not supported: send the text"
    else:
        why = "prompt must be a text (or a list of one text)"
    raise ApiError(400, "invalid_prompt", why, "prompt")


def completion_request(body: Any) -> CompletionRequest:
    """A legacy completion request's body read as a turn (ApiError 400 naming the field)."""
    body = known_fields(body, KNOWN, "a completion")
    model = mind_model(body)
    neutral_only(body, NEUTRAL, WHY)
    request = CompletionRequest(model=model, text=_prompt(body.get("prompt")))
    _sampling(body, request)
    request.options = _options(body.get("mind_options"))
    _stream(body, request)
    return request


def _usage(done: TurnDone) -> dict[str, int]:
    usage = done.data["usage"]
    return {k: usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}


def _chunk(answer_id: str, model: str, text: str, finish: str | None) -> dict[str, Any]:
    """A completion (`answer_id`: the turn's id), or one chunk of a streamed one."""
    return {
        "id": f"cmpl-{answer_id}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}],
    }


def _data(payload: Any) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


async def completions(call: Call) -> Response:
    from mindledger.service.http_api import in_turn_thread

    mind: ServedMind | None = None
    request: CompletionRequest | None = None
    try:
        raw = await read_json(call.request, call.max_body)
        request = completion_request(raw)
        mind = _the_mind(call, request.model)
        asked = turn_request(call.request.headers, raw)  # a retry: the same turn again
        if request.stream:
            return await _streamed(call, mind, request, asked)
        turn, served = request, mind
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
    answer = _chunk(done.data["turn"], request.model, done.data["reply"], _finish(done))
    headers = REPLAYED if attempt.replayed else None
    return JSONResponse({**answer, "usage": _usage(done), "mind_turn": done.data}, headers=headers)


async def _streamed(
    call: Call, mind: ServedMind, request: CompletionRequest, asked: TurnRequest
) -> Response:
    news = await streamed_turn(call, mind, request, asked)
    if isinstance(news, Response):
        return news
    stream_id, model = news.turn, request.model

    async def chunks() -> AsyncIterator[bytes]:
        async for item in news:
            if isinstance(item, str):
                yield _data(_chunk(stream_id, model, item, None))
            elif isinstance(item, StreamError):
                error = {"message": item.message, "type": "server_error", "param": None}
                extra = {"mind_turn": item.mind_turn} if item.mind_turn is not None else {}
                yield _data({"error": {**error, "code": item.code}, **extra})
            else:
                yield _data({**_chunk(stream_id, model, "", _finish(item)), "mind_turn": item.data})
                if request.include_usage:  # as OpenAI sends it: a last chunk with no choice
                    last = {**_chunk(stream_id, model, "", None), "choices": []}
                    yield _data({**last, "usage": _usage(item)})
        yield b"data: [DONE]\n\n"

    return StreamingResponse(chunks(), media_type="text/event-stream", headers=SSE_HEADERS)


COMPLETION = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices", "usage", "mind_turn"],
    "properties": {
        "id": {"type": "string"},
        "object": {"const": "text_completion"},
        "created": {"type": "integer"},
        "model": {"type": "string"},
        "choices": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["text", "index", "logprobs", "finish_reason"],
                "properties": {
                    "text": {"type": "string"},
                    "index": {"type": "integer"},
                    "logprobs": {"type": "null"},
                    "finish_reason": {"enum": ["stop", "length"]},
                },
            },
        },
        "usage": {"type": "object"},
        "mind_turn": {"type": "object"},
    },
}


def extension(minds: Minds) -> Extension:
    """`POST /v1/completions` on the server."""
    from mindledger.service import openai_bodies
    from mindledger.service.app import Extension

    return Extension(
        endpoints=[
            Endpoint(
                "POST",
                "/v1/completions",
                completions,
                "OpenAI-compatible legacy completions: the prompt is a turn of mind/<name>, "
                "its reply `choices[0].text`; `stream` answers text_completion chunks; the "
                "turn record is in `mind_turn`; extra field `mind_options` as on chat.",
                streams=True,
                tags=("openai",),
                result=COMPLETION,
                own_body=openai_bodies.completion_body,
            )
        ]
    )
