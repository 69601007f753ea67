"""A loopback OpenAI-compatible provider that answers its first requests with an error status
(503: unavailable, as an overloaded provider does; 404: no such model) and then with a reply."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Flaky:
    """`failures` requests get `status`; the rest get `reply`. `asked` counts every request."""

    reply: str
    failures: int
    status: int = 503
    url: str = ""
    asked: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(flaky: Flaky) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with flaky.lock:
                flaky.asked += 1
                failing = flaky.asked <= flaky.failures
            if failing:
                status = flaky.status
                error = {"message": f"upstream says {status}", "type": "x", "code": str(status)}
                body = json.dumps({"error": error}).encode()
            else:
                status = 200
                message = {"role": "assistant", "content": flaky.reply}
                body = json.dumps(
                    {
                        "id": "chatcmpl-flaky",
                        "object": "chat.completion",
                        "created": 1,
                        "model": "flaky",
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
                    }
                ).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def flaky_provider(reply: str, failures: int, status: int = 503) -> Iterator[Flaky]:
    """Serve on 127.0.0.1; the url is the base URL (…/v1)."""
    flaky = Flaky(reply, failures, status)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(flaky))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    flaky.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield flaky
    finally:
        server.shutdown()
        server.server_close()
