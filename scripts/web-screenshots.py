#!/usr/bin/env python3
"""Screenshots of every view of the web page (docs/screenshots/*.png, shown in the README).

Builds a small demo mind with the `mind` command (scripted mock turns, threads opened on
different days, related concepts, a name change and a model switch), serves it with
`mind serve` on a free loopback port and photographs each view in Debian's headless Chromium,
at desktop width and, for the chat and the concepts, at phone width; and the dry run of a
forget, waiting for its confirmation.

Run: .venv/bin/python scripts/web-screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

MIND = (sys.executable, "-c", "from mindledger.cli.main import main; main()")
DESKTOP, PHONE = (1200, 860), (390, 844)
TURNS = [
    (
        "Hi! I'm Sam. Can you help me plan the garden?",
        "Happy to help, Sam. Let's start with the beds.\n"
        "CONCEPT: garden.beds = the three raised beds by the fence\n"
        "COMMIT: draft a planting plan for the raised beds",
    ),
    (
        "The tomatoes keep splitting. Why?",
        "Usually uneven watering: dry spells then a soak.\n"
        "RELATE: garden.tomatoes -> part_of -> garden.beds\n"
        "COMMIT: check the watering schedule with Sam",
    ),
    (
        "Please call yourself Fern from now on.",
        'Fern it is.\nCLAIM:identity_proposal={"name": "Fern"}\nREFLECT: Sam likes short answers',
    ),
    (
        "Remember <script>alert('hi')</script> is just text.",
        "Noted: that is only text to me.\nCLAIM: not a valid claim",
    ),
]


def run(home: Path, *args: str, now: str) -> str:
    env = dict(os.environ, MIND_HOME=str(home), MIND_NOW=now, MIND_NO_SERVER="1")
    done = subprocess.run([*MIND, *args], env=env, capture_output=True, text=True, check=True)
    return done.stdout


def build(home: Path) -> None:
    run(home, "init", "--name", "Echo", now="2026-05-01T08:00:00Z")
    run(
        home,
        "thread",
        "open",
        "When is the first frost?",
        "--content",
        "Sam wants to know when to harvest the last tomatoes",
        now="2026-05-01T09:00:00Z",
    )
    run(
        home,
        "concept",
        "define",
        "garden.tomatoes",
        "Sam's six tomato plants",
        now="2026-05-01T09:05:00Z",
    )
    run(
        home,
        "thread",
        "open",
        "Which seeds to order?",
        "--content",
        "Seed catalogue arrives in June",
        now="2026-05-02T10:00:00Z",
    )
    for n, (text, reply) in enumerate(TURNS):
        run(
            home,
            "turn",
            text,
            "--model",
            "mock",
            "--mock-reply",
            reply,
            now=f"2026-05-03T1{n}:00:00Z",
        )
    run(
        home,
        "thread",
        "open",
        "Compost or mulch?",
        "--content",
        "Decide before the autumn",
        now="2026-05-04T09:00:00Z",
    )
    cid = json.loads(run(home, "commitments", "--json", now="2026-05-04T10:00:00Z"))[0]["cid"]
    run(home, "close", cid, "--reason", "plan drafted", now="2026-05-04T11:00:00Z")
    run(
        home,
        "concept",
        "define",
        "garden.tomatoes",
        "Sam's six tomato plants (two splitting)",
        now="2026-05-04T12:00:00Z",
    )
    run(home, "concept", "alias", "garden.tomatoes", "tomatoes", now="2026-05-04T12:01:00Z")
    run(
        home,
        "concept",
        "define",
        "garden.compost",
        "The bin behind the shed",
        now="2026-05-04T12:02:00Z",
    )
    run(
        home,
        "concept",
        "relate",
        "garden.compost",
        "garden.beds",
        "--as",
        "feeds",
        now="2026-05-04T12:03:00Z",
    )
    run(home, "model", "set", "mock", now="2026-05-04T12:04:00Z")
    run(home, "identity", "adopt", "Fern", "--reason", "Sam asked", now="2026-05-04T12:05:00Z")
    run(
        home,
        "remember",
        "Mid-October, most years",
        "--question",
        "When is the first frost here?",
        now="2026-05-05T08:00:00Z",
    )
    run(home, "knowledge", "verify", "When is the first frost here?", now="2026-05-05T08:01:00Z")
    run(home, "remember", "Sam keeps the spare key under the blue pot", now="2026-05-05T08:02:00Z")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    from bench.web import browser

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "echo"
        build(home)
        env = dict(
            os.environ, MIND_HOME=str(home), MIND_NOW="2026-05-06T09:00:00Z", MIND_NO_SERVER="1"
        )
        token = subprocess.run(
            [*MIND, "serve", "--print-token"], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        server = subprocess.Popen(
            [*MIND, "serve", "--port", "0", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert server.stdout is not None
        ready = json.loads(server.stdout.readline())
        driver = browser()
        try:
            shoot(driver, ready["url"], ready["minds"][0], token, args.out)
        finally:
            driver.quit()
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


def shoot(d: Any, url: str, name: str, token: str, out: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(d, 30)

    def view(which: str, size: tuple[int, int] = DESKTOP) -> None:
        d.set_window_size(*size)
        d.get("about:blank")
        d.get(f"{url}/#{which}")
        wait.until(lambda x: x.find_elements(By.CSS_SELECTOR, f'section[data-view="{which}"]'))

    def save(file: str) -> None:
        d.save_screenshot(str(out / file))

    d.get(url + "/")
    wait.until(lambda x: x.find_element(By.ID, "token").is_displayed())
    save("login.png")
    session = json.dumps({"token": token, "mind": name})
    d.execute_script(f"sessionStorage.setItem('mindledger', {json.dumps(session)})")
    view("chat")
    whys = d.find_elements(By.CSS_SELECTOR, "details.why summary")
    whys[1].click()
    wait.until(lambda x: x.find_elements(By.CSS_SELECTOR, ".detail"))
    d.execute_script("document.querySelectorAll('.turn')[1].scrollIntoView()")
    save("chat.png")
    view("chat", PHONE)
    save("chat-phone.png")
    view("ledger")
    d.find_element(By.ID, "verify").click()
    wait.until(lambda x: "OK" in x.find_element(By.ID, "verify-result").text)
    d.find_element(By.CSS_SELECTOR, "#events details summary").click()
    save("ledger.png")
    for which in ("commitments", "threads", "concepts", "identity", "knowledge"):
        view(which)
        save(f"{which}.png")
    view("concepts", PHONE)
    save("concepts-phone.png")
    view("commitments")  # forget: the dry run's plan, waiting for the owner's confirmation
    d.find_element(By.CSS_SELECTOR, "button[data-action=forget]").click()
    wait.until(lambda x: x.find_elements(By.CSS_SELECTOR, ".forget-plan"))
    save("forget.png")
    view("recall")
    d.find_element(By.ID, "r-query").send_keys("tomatoes splitting")
    d.find_element(By.CSS_SELECTOR, "#view form button").click()
    wait.until(lambda x: x.find_elements(By.CSS_SELECTOR, "#recall-result table"))
    save("recall.png")


if __name__ == "__main__":
    main()
