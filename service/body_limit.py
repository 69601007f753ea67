"""`--max-body` and the body's time limit for the routes an extension mounts as they are (MCP's
`/mcp`, the web page's): the /v1 endpoints read their bodies through `endpoints.read_json`,
which holds both, but a mounted app reads its own, so a body of any size (or one that never
finished arriving) reached the MCP SDK. The body is read here first, within the limits, then
handed to the app as if it came from the client."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mindledger.service.endpoints import BODY_TIMEOUT_S
from mindledger.service.errors import error_response


class BodyLimit:
    """`app` with request bodies over `limit` bytes refused (413) and bodies that take longer
    than BODY_TIMEOUT_S refused (408), in the one error shape, before `app` sees them."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"the body is over the limit of {self.limit} bytes"
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await error_response(413, "too_large", too_large)(scope, receive, send)
            return
        read: list[Message] = []
        try:
            async with asyncio.timeout(BODY_TIMEOUT_S):
                size = 0
                while True:
                    message = await receive()
                    read.append(message)
                    if message["type"] != "http.request":
                        break  # the client left: the app hears it as it would have
                    size += len(message.get("body", b""))
                    if size > self.limit:
                        await error_response(413, "too_large", too_large)(scope, receive, send)
                        return
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            late = f"the body did not arrive within {BODY_TIMEOUT_S:g} s"
            await error_response(408, "body_timeout", late)(scope, receive, send)
            return

        async def replayed() -> Any:
            # The body as read, then the client's own messages (its disconnect, for a stream).
            return read.pop(0) if read else await receive()

        await self.app(scope, replayed, send)
