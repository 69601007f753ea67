"""A turn streamed to an OpenAI client (the legacy completions and the Responses API; chat
completions has its own in service/openai_api.py): the turn runs in the turn workers whatever
the client does, and the answer waits for its first news. A refusal (the floor checks every
argument before it records anything) or a failed generation before any text is an error
response with its status, never a stream that carries an error; after that, the stream gives
each piece of the visible reply (`str`), then the finished turn (`TurnDone`) or why it ended
without one (`StreamError`). The stream knows its turn's id from the start (`TurnNews.turn`:
the floor tells it once the turn is recorded), so its ids are the turn's, as a whole answer's
are."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.responses import Response

from mindledger.domain.errors import MindError
from mindledger.service.openai_api import (
    _refused,
    mind_secrets,
    openai_error,
)
from mindledger.service.turn_answers import failed_turn, failed_turn_response

if TYPE_CHECKING:
    from mindledger.service.chat_request import ChatRequest
    from mindledger.service.endpoints import Call
    from mindledger.service.minds import ServedMind, TurnDone
    from mindledger.turn_attempts import TurnRequest

SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


@dataclass(frozen=True)
class StreamError:
    """Why a streamed turn ended without a reply, once text was sent: one line, a code, and
    the turn record when there is one (a failed generation)."""

    message: str
    code: str
    mind_turn: dict[str, Any] | None = None


@dataclass(frozen=True)
class TurnNews:
    """A streamed turn's id and its news in order (the pieces, then one end)."""

    turn: str
    items: AsyncIterator[str | TurnDone | StreamError]

    def __aiter__(self) -> AsyncIterator[str | TurnDone | StreamError]:
        return self.items


async def first_news(queue: asyncio.Queue[tuple[str, Any]]) -> tuple[str, Any, str]:
    """The turn's first news after its start (kind, data) and its id ("" when it never
    started: a refusal)."""
    turn = ""
    kind, data = await queue.get()
    while kind == "start":
        turn = data
        kind, data = await queue.get()
    return kind, data, turn


async def streamed_turn(
    call: Call, mind: ServedMind, request: ChatRequest, asked: TurnRequest
) -> Response | TurnNews:
    """Start `request`'s turn; an error response when it ends before its first text, else
    its id and its news."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    secrets = mind_secrets(call)

    def put(kind: str, data: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, data))

    def run() -> None:
        from mindledger.service.errors import internal_error_message

        try:
            args = {**request.turn_args(), **listeners(put)}
            attempt = mind.attempt_turn(asked, request.text, args)  # a retry: the same turn
            done = attempt.done
            if attempt.replayed:  # answered from the record: its reply, whole
                put("start", done.data["turn"])
                put("delta", done.data["reply"])
        except MindError as e:
            put("refused", e)
        except Exception as e:  # a thread boundary: logged, reported as one line, never lost
            words = "the turn failed on the server"
            put("error", internal_error_message(e, secrets, mind.home.path, words))
        else:
            put("done", done)

    call.minds.turn_pool.submit(run)
    kind, data, turn = await first_news(queue)
    if kind == "refused":
        return _refused(data, call, mind, request)
    if kind == "error":
        return openai_error(500, "internal", data)
    if kind == "done" and data.outcome.status == "failed":
        return failed_turn_response(data.data)

    async def news() -> AsyncIterator[str | TurnDone | StreamError]:
        nonlocal kind, data
        while kind == "delta":
            yield data
            kind, data = await queue.get()
        if kind == "error":
            yield StreamError(data, "internal")
        elif kind == "refused":  # after text was sent: no longer a status to give
            from mindledger.error_report import failure_message
            from mindledger.service.clients import shows_paths

            full = shows_paths()
            shown = failure_message(data, mind.home.path, secrets, full_path=full)
            yield StreamError(" ".join(shown.split()), "invalid_request")
        elif data.outcome.status == "failed":
            error = failed_turn(data.data)[1]["error"]
            yield StreamError(error["message"], error["code"], data.data)
        else:
            yield data

    named = turn or (data.data["turn"] if kind == "done" else uuid.uuid4().hex)
    return TurnNews(named, news())


def listeners(put: Callable[[str, Any], None]) -> dict[str, Any]:
    """The floor's turn listeners that put its news on a stream's queue: the turn's id once it
    is recorded, each piece of the visible reply."""
    return {
        "on_start": lambda turn: put("start", turn),
        "on_delta": lambda piece: put("delta", piece),
    }
