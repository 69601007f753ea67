"""A loopback OpenAI-compatible provider that answers a scripted reply, streamed in small chunks
when the request asks for a stream (server-sent events, as OpenAI sends them), whole otherwise;
with `drop_after`, a stream stops after that many chunks without its end."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

USAGE = {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}


class _Streaming(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    reply = ""
    finish_reason = "stop"
    chunk = 3
    drop_after: int | None = None
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.requests.append(body)
        if body.get("stream"):
            self._stream()
            return
        payload = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.reply},
                    "finish_reason": self.finish_reason,
                }
            ],
            "usage": USAGE,
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _event(self, delta: dict[str, Any], finish: str | None, usage: Any = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None:
            chunk["choices"], chunk["usage"] = [], usage
        return f"data: {json.dumps(chunk)}\n\n".encode()

    def _stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        pieces = [self.reply[i : i + self.chunk] for i in range(0, len(self.reply), self.chunk)]
        self.wfile.write(self._event({"role": "assistant", "content": ""}, None))
        for n, piece in enumerate(pieces):
            if self.drop_after is not None and n >= self.drop_after:
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(self._event({"content": piece}, None))
        self.wfile.write(self._event({}, self.finish_reason))
        self.wfile.write(self._event({}, None, USAGE))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def streaming_provider(
    reply: str, finish_reason: str = "stop", drop_after: int | None = None
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve on 127.0.0.1; yield the base URL and the request bodies seen."""
    seen: list[dict[str, Any]] = []
    handler = type(
        "Handler",
        (_Streaming,),
        {
            "reply": reply,
            "finish_reason": finish_reason,
            "drop_after": drop_after,
            "requests": seen,
        },
    )
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", seen
    finally:
        server.shutdown()
        server.server_close()
