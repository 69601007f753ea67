"""`mind serve` stopped with a turn in flight: seconds from SIGTERM to the process's exit while
a turn waits on a model that never answers (a loopback OpenAI-compatible server that holds
every request), the turn's recorded status and `mind verify` after. Target: exit within 2 s,
the turn recorded interrupted, the ledger verifying.
Run: PYTHONPATH=. .venv/bin/python -m bench.serve_stop [--runs 5]
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.common import percentiles, report
from bench.serve import base_env, init_home, mind, start_server, stop_server


@contextmanager
def silent_model() -> Iterator[tuple[str, threading.Event]]:
    """A model endpoint that never answers; its base URL and an event set on each request."""
    asked = threading.Event()
    hold = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            asked.set()
            hold.wait(300)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", asked
    finally:
        hold.set()
        server.shutdown()
        server.server_close()


def send_turn(url: str, token: str, api_base: str, answers: list[int]) -> None:
    """POST a turn through the server; its status (or 0 when the connection broke)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    con = http.client.HTTPConnection(host, int(port), timeout=300)
    body = {"text": "in flight", "model": "openai/stub", "api_base": api_base}
    try:
        con.request(
            "POST",
            "/v1/minds/Echo/turns",
            json.dumps(body),
            {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        answers.append(con.getresponse().status)
    except OSError:
        answers.append(0)
    finally:
        con.close()


def one_stop(folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """Serve a new mind, start a turn its model never answers, SIGTERM; what happened."""
    home = init_home(folder / "echo", "Echo", env, turns=0)
    proc, info = start_server([home], env, folder / "serve.log")
    answers: list[int] = []
    try:
        with silent_model() as (api_base, asked):
            token = (home / "server-token").read_text().strip()
            turn = (info["url"], token, api_base, answers)
            client = threading.Thread(target=send_turn, args=turn)
            client.start()
            if not asked.wait(120):
                raise RuntimeError("the turn never reached the model")
            start = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(120)
            seconds = time.perf_counter() - start
            client.join(120)
    finally:
        stop_server(proc)
    status = json.loads(mind(["--home", str(home), "query", "SELECT status FROM turns"], env))
    verified = json.loads(mind(["--home", str(home), "verify", "--json"], env))["ok"]
    return {
        "seconds": seconds,
        "exit": code,
        "client": answers[0] if answers else None,
        "turn": [row["status"] for row in status],
        "verified": verified,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = {**base_env(), "OPENAI_API_KEY": "sk-bench-not-a-real-key"}
    runs = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            run = one_stop(Path(tmp), env)
        print(f"run {i + 1}: {json.dumps(run)}", flush=True)
        runs.append(run)
    seconds = [r["seconds"] for r in runs]
    report(
        "serve_stop",
        {
            **percentiles(seconds),
            "max_ms": round(max(seconds) * 1000, 1),
            "runs": len(runs),
            "all_interrupted": all(r["turn"] == ["interrupted"] for r in runs),
            "all_verified": all(r["verified"] for r in runs),
            "all_exit_0": all(r["exit"] == 0 for r in runs),
            "client_statuses": sorted({r["client"] for r in runs}),
        },
    )


if __name__ == "__main__":
    main()
