"""A loopback OpenAI-compatible provider that uses tools: offered tools, it calls the first
with {"city": "Paris"}; sent a tool result last, it answers in text; asked for a response
format, it answers JSON. Streamed (tool calls in pieces, as OpenAI sends them) when asked;
every request body is kept."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "It is 18 degrees and sunny in Paris."
FORMATTED = '{"city": "Paris", "celsius": 18}'
ARGUMENTS = '{"city": "Paris"}'
USAGE = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}


def _reply(body: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """The text and the tool calls this provider answers `body` with."""
    if body["messages"][-1]["role"] == "tool":
        return ANSWER, []
    if body.get("tools"):
        name = body["tools"][0]["function"]["name"]
        call = {
            "id": "call_upstream_1",
            "type": "function",
            "function": {"name": name, "arguments": ARGUMENTS},
        }
        return None, [call]
    return (FORMATTED if body.get("response_format") else "Plain."), []


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.requests.append(body)
        text, calls = _reply(body)
        finish = "tool_calls" if calls else "stop"
        if body.get("stream"):
            self._stream(text, calls, finish)
            return
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": finish}
        payload = {
            "id": "chatcmpl-up",
            "object": "chat.completion",
            "created": 0,
            "model": "upstream",
            "choices": [choice],
            "usage": USAGE,
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _event(self, delta: dict[str, Any], finish: str | None) -> bytes:
        chunk = {
            "id": "chatcmpl-up",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "upstream",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(chunk)}\n\n".encode()

    def _stream(self, text: str | None, calls: list[dict[str, Any]], finish: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(self._event({"role": "assistant", "content": text and ""}, None))
        for start in range(0, len(text or ""), 5):
            self.wfile.write(self._event({"content": (text or "")[start : start + 5]}, None))
        for index, call in enumerate(calls):
            named = {"name": call["function"]["name"], "arguments": ""}
            first = {"index": index, "id": call["id"], "type": "function", "function": named}
            self.wfile.write(self._event({"tool_calls": [first]}, None))
            arguments = call["function"]["arguments"]
            for part in (arguments[:6], arguments[6:]):
                piece = {"index": index, "function": {"arguments": part}}
                self.wfile.write(self._event({"tool_calls": [piece]}, None))
        self.wfile.write(self._event({}, finish))
        usage = {"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 0}
        usage.update({"model": "upstream", "choices": [], "usage": USAGE})
        self.wfile.write(f"data: {json.dumps(usage)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def tool_provider() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve on 127.0.0.1: the base URL (…/v1) and the request bodies as they arrive."""
    handler: type[_Handler] = type("Handler", (_Handler,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler.requests
    finally:
        server.shutdown()
        server.server_close()
