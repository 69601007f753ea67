"""The web page on a large mind: each view's time to its first full render in headless
Chromium, and the latency of the JSON endpoints the views call, against a real `mind serve`.

The mind: `bench.common.fill` (commitments, closes, concepts, threads) to N events, projected as
the follower would, then a few scripted turns through the server so the chat has some.
"Rendered" is the browser's own clock: the `rendered:VIEW` performance mark the page sets once
a view's data is in the page, measured from the navigation's start (Navigation Timing); the
load event is reported beside it.

Run: .venv/bin/python -m bench.web [--events 100000] [--loads 5] [--calls 20]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench.common import fill, new_mind, percentiles, report, timed
from mindledger.compose import Home, open_reader, read_model_paths
from mindledger.projections.engine.projector import Projector

VIEWS = ("chat", "ledger", "commitments", "threads", "concepts", "identity", "recall")
MIND = (sys.executable, "-c", "from mindledger.cli.main import main; main()")
TURNS = 20


def build(folder: Path, events: int) -> Home:
    app = new_mind(folder)
    fill(app, events - 1)
    app.close()
    home = Home(folder)
    projector = Projector(read_model_paths(home).working)
    projector.catch_up(open_reader(home), maintain=True)  # with the key store: sealed fields
    projector.close()
    return home


def serve(home: Home) -> tuple[subprocess.Popen[str], str, str]:
    env = dict(os.environ, MIND_HOME=str(home.path), MIND_NO_SERVER="1")
    token = subprocess.run(
        [*MIND, "serve", "--print-token"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    process = subprocess.Popen(
        [*MIND, "serve", "--port", "0", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    return process, json.loads(process.stdout.readline())["url"], token


def call(url: str, token: str, method: str = "GET", body: Any = None) -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with opener.open(urllib.request.Request(url, data, headers, method=method)) as r:
        return json.loads(r.read())


def endpoint_latency(base: str, token: str, calls: int) -> dict[str, Any]:
    mind = f"{base}/v1/minds/Bench"
    ui = f"{base}/ui/api/minds/Bench"
    threads = call(f"{ui}/threads?limit=20", token)["threads"]
    tension = "&".join(f"thread={urllib.parse.quote(t['stream_id'])}" for t in threads)
    urls = {
        "v1/minds": f"{base}/v1/minds",
        "ui/turns": f"{ui}/turns?limit=20",
        "ui/events?limit=100": f"{ui}/events?limit=100",
        "ui/events?q=": f"{ui}/events?limit=100&q=topic%20123",
        "ui/commitments open": f"{ui}/commitments?status=open&limit=200",
        "ui/commitments closed": f"{ui}/commitments?status=closed&limit=200",
        "ui/threads (100 of all)": f"{ui}/threads?limit=100",
        "v1/threads (all, as mind threads)": f"{mind}/threads",
        "ui/tension (20 threads)": f"{ui}/tension?{tension}",
        "ui/concepts (200 of all)": f"{ui}/concepts?limit=200&edges=300",
        "v1/concepts (all, as mind concepts)": f"{mind}/concepts",
        "v1/identity": f"{mind}/identity",
        "v1/recall": f"{mind}/recall?q=follow%20up%20on%20item%2042&budget=2000",
        "ui/turn detail": None,
    }
    last = call(f"{ui}/turns?limit=1", token)[-1]["turn"]
    urls["ui/turn detail"] = f"{ui}/turns/{last}"
    figures: dict[str, Any] = {}
    for name, url in urls.items():
        assert url is not None
        call(url, token)  # warm
        samples = [timed(lambda u=url: call(u, token))[0] for _ in range(calls)]
        figures[name] = percentiles(samples)
    return figures


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from tests.browser.conftest import CHROMEDRIVER, CHROMIUM, FLAGS

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='bench-web-')}")
    options.add_argument("--window-size=1200,900")
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def page_loads(base: str, token: str, loads: int) -> dict[str, Any]:
    from selenium.webdriver.support.ui import WebDriverWait

    driver = browser()
    try:
        driver.get(base + "/")
        session = json.dumps({"token": token, "mind": "Bench"})
        driver.execute_script(f"sessionStorage.setItem('mindledger', {json.dumps(session)})")
        figures: dict[str, Any] = {}
        for view in VIEWS:
            rendered, loaded = [], []
            for _ in range(loads + 1):  # the first load warms the server's caches: dropped
                driver.get("about:blank")
                driver.get(f"{base}/#{view}")
                mark = f"rendered:{view}"
                WebDriverWait(driver, 60).until(
                    lambda d, m=mark: d.execute_script(
                        "return performance.getEntriesByName(arguments[0]).length", m
                    )
                )
                at = driver.execute_script(
                    "const n = performance.getEntriesByType('navigation')[0];"
                    "return [performance.getEntriesByName(arguments[0])[0].startTime,"
                    " n.loadEventEnd - n.startTime]",
                    mark,
                )
                rendered.append(at[0] / 1000)
                loaded.append(at[1] / 1000)
            figures[view] = {
                "rendered": percentiles(rendered[1:]),
                "load_event": percentiles(loaded[1:]),
            }
        return figures
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        home = build(Path(tmp) / "mind", args.events)
        built = time.perf_counter() - start
        process, base, token = serve(home)
        try:
            for n in range(TURNS):
                reply = f"Noted {n}.\nCOMMIT: follow up on note {n}"
                body = {"text": f"note {n}", "model": "mock", "mock_reply": reply}
                call(f"{base}/v1/minds/Bench/turns", token, "POST", body)
            pages = page_loads(base, token, args.loads)
            endpoints = endpoint_latency(base, token, args.calls)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
    report(
        "web",
        {
            "events": args.events,
            "build_s": round(built, 1),
            "views": pages,
            "endpoints": endpoints,
        },
    )


if __name__ == "__main__":
    main()
