"""`GET /v1/minds/{name}/events?after=POSITION`: new ledger events as server-sent events.

The ledger has no notifications that cross processes (another process may write it), so the
stream polls the ledger, briefly; each event is sent once, in position order, as `mind log
--json` shows one, with its position as the SSE id (a client reconnects with Last-Event-ID)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse

from mindledger.service.endpoints import Call, Endpoint, Param
from mindledger.service.errors import ApiError

POLL_S = 0.2  # how soon a new event reaches the client
KEEPALIVE_S = 15.0  # a comment line, so proxies and clients see the stream is alive


async def events(call: Call) -> Any:
    from mindledger.service.http_api import sse

    mind = call.the_mind
    after = call.params.get("after")
    last_id = call.request.headers.get("last-event-id")
    if last_id is not None:
        if not last_id.isdigit():
            raise ApiError(400, "bad_request", "Last-Event-ID must be a ledger position")
        after = int(last_id)
    head = (await mind.aio.status()).head.position or 0
    if after is None:  # from now on
        after = head
    elif after > head:  # a position this ledger has not reached: another ledger's, or made up
        raise ApiError(
            400, "bad_request", f"position {after} is beyond this ledger's head ({head})"
        )
    stopping = call.request.app.state.stopping

    async def stream() -> AsyncIterator[bytes]:
        position, quiet_since = after, time.monotonic()
        yield b": connected\n\n"
        while not stopping.is_set():
            rows = (await mind.aio.events_after(position)).model_dump(mode="json")
            for row in rows:
                position = row["position"]
                yield sse("event", row, position)
            if rows:
                quiet_since = time.monotonic()
                continue
            if time.monotonic() - quiet_since > KEEPALIVE_S:
                quiet_since = time.monotonic()
                yield b": keep-alive\n\n"
            await asyncio.sleep(POLL_S)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


def events_endpoint() -> Endpoint:
    """The route, for the table in service/http_api.py."""
    return Endpoint(
        "GET",
        "/v1/minds/{name}/events",
        events,
        "New ledger events as server-sent events (`event: event`, data as `mind log --json` "
        "shows one; id = position). Default: from the current head.",
        params=(Param("after", "integer", minimum=0, description="Send events after this."),),
        streams=True,
        tags=("reads",),
    )
