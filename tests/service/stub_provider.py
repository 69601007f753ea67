"""A loopback OpenAI-compatible provider that holds each answer until the test releases it,
so a test can act (disconnect, SIGTERM) while a turn waits on its model."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Gate:
    """`received` is set when a request arrives; the answer waits for `release`."""

    reply: str
    received: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""
    authorizations: list[str] = field(default_factory=list)  # each request's header


def _handler(gate: Gate) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            gate.authorizations.append(self.headers.get("Authorization", ""))
            gate.received.set()
            gate.release.wait(120)
            body = json.dumps(
                {
                    "id": "chatcmpl-stub",
                    "object": "chat.completion",
                    "created": 1,
                    "model": "stub",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": gate.reply},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
                }
            ).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def held_provider(reply: str) -> Iterator[Gate]:
    """Serve on 127.0.0.1; the gate's url is the base URL (…/v1)."""
    gate = Gate(reply)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(gate))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    gate.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield gate
    finally:
        gate.release.set()
        server.shutdown()
        server.server_close()
