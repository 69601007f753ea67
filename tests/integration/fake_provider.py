"""A loopback HTTP server that answers like a failing OpenAI-compatible provider."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True  # else ~40 ms per call
    status = 500
    delay = 0.0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(self.delay)
        body = json.dumps(
            {
                "error": {
                    "message": f"fake provider says {self.status}",
                    "type": "fake",
                    "code": self.status,
                }
            }
        ).encode()
        try:
            self.send_response(self.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def failing_provider(status: int, delay: float = 0.0) -> Iterator[str]:
    """Serve on 127.0.0.1 and yield the base URL."""
    handler = type("Handler", (_Handler,), {"status": status, "delay": delay})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


class _Embeddings(BaseHTTPRequestHandler):
    """Answers /embeddings like OpenAI, with hashed bag-of-words vectors (deterministic)."""

    disable_nagle_algorithm = True
    requests: list[int] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self.requests.append(len(texts))
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words(t)}
            for i, t in enumerate(texts)
        ]
        payload = json.dumps(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


def bag_of_words(text: str, dims: int = 64) -> list[float]:
    """A deterministic stand-in for an embedding: word counts hashed into `dims` buckets."""
    import zlib

    vector = [0.0] * dims
    for word in text.lower().split():
        vector[zlib.crc32(word.strip(".,!?").encode()) % dims] += 1.0
    return vector


@contextmanager
def embedding_provider() -> Iterator[tuple[str, list[int]]]:
    """Serve embeddings on 127.0.0.1; yield the base URL and the sizes of the requests seen."""
    seen: list[int] = []
    handler = type("Handler", (_Embeddings,), {"requests": seen})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


class _Recording(BaseHTTPRequestHandler):
    """Answers /chat/completions like OpenAI with a fixed reply and keeps every request body;
    with `echo_auth`, answers 401 with the request's Authorization header in the error (as some
    providers and proxies do); with `echo_messages` ("text" or "json"), answers 400 quoting the
    messages after the system message, as text or as JSON (as a proxy that shows what it
    refused does)."""

    disable_nagle_algorithm = True
    requests: list[dict[str, Any]] = []
    reply: object = "Noted."  # any JSON value: a malformed answer has a non-text content
    echo_auth = False
    finish_reason = "stop"
    echo_messages: str | None = None

    def do_POST(self) -> None:
        self.requests.append(
            json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        )
        status = 401 if self.echo_auth else 400 if self.echo_messages else 200
        if self.echo_messages:
            quoted = self.requests[-1]["messages"][1:]
            if self.echo_messages == "json":
                said = json.dumps(quoted)
            else:
                said = " | ".join(str(m.get("content")) for m in quoted)
            payload = {"error": {"message": f"refused by policy: {said}", "code": 400}}
        elif self.echo_auth:
            seen = self.headers.get("Authorization", "")
            payload: dict[str, Any] = {
                "error": {
                    "message": f"invalid key {seen.split()[-1] if seen else ''} "
                    f"(header Authorization: {seen})",
                    "code": 401,
                }
            }
        else:
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
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def recording_provider(
    reply: object = "Noted.",
    echo_auth: bool = False,
    finish_reason: str = "stop",
    echo_messages: str | None = None,
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve chat completions on 127.0.0.1; yield the base URL and the request bodies seen."""
    seen: list[dict[str, Any]] = []
    handler = type(
        "Handler",
        (_Recording,),
        {
            "requests": seen,
            "reply": reply,
            "echo_auth": echo_auth,
            "finish_reason": finish_reason,
            "echo_messages": echo_messages,
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


def scripted_provider(
    reply: str, finish_reason: str = "stop"
) -> AbstractContextManager[tuple[str, list[dict[str, Any]]]]:
    """One scripted chat reply with its finish reason (`recording_provider`)."""
    return recording_provider(reply, finish_reason=finish_reason)
