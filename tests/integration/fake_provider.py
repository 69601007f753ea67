"""A loopback HTTP server that answers like a failing OpenAI-compatible provider."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer


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
