"""Browser tests: a real `mind serve` on a free loopback port, driven in Debian's headless
Chromium through its own /usr/bin/chromedriver (selenium never downloads a driver here).

`scripts/browser-test-setup.sh` (run by `make test` and CI) installs both as root; without them
and without root the tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, subprocess_env

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# Per /work/.library/env/machines/python.md: no sandbox as root, and nothing that phones home
# (the machine's network is closed; each refused connection would slow the browser down).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# A deadline for a busy machine, never a timing threshold: a server's first hosted-model turn
# imports LiteLLM, which took 22-25 s under load.
WAIT_S = 120.0
MIND = (sys.executable, "-c", "from mindledger.cli.main import main; main()")


def _require_browser() -> None:
    if CHROMIUM.exists() and CHROMEDRIVER.exists():
        return
    if os.geteuid() == 0:
        pytest.fail("Chromium is missing: run scripts/browser-test-setup.sh (installs it as root)")
    pytest.skip("Debian's chromium and chromium-driver are not installed and this is not root")


def mind(home: Path, *args: str, now: str | None = None, check: bool = True) -> Any:
    """Run `mind ARGS` as a process on `home` (MIND_NOW `now` when given); its JSON if any."""
    env = subprocess_env(home, MIND_NO_SERVER="1", LITELLM_OFFLINE_MODE="true")
    if now:
        env["MIND_NOW"] = now
    done = subprocess.run(
        [*MIND, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"mind {' '.join(args)} failed: {done.stderr}")
    return json.loads(done.stdout) if "--json" in args and done.stdout.strip() else done


def in_process(home: Path, args: list[str], now: str | None = None) -> Any:
    """`mind ARGS` in this process, with the environment `mind` gives the processes: for the
    set-up the page's tests do not test (a process would only pay the start-up)."""
    from click.testing import CliRunner

    from mindledger.cli.main import mind as mind_command

    env = {**subprocess_env(home, MIND_NO_SERVER="1", LITELLM_OFFLINE_MODE="true"), "MIND_NOW": now}
    done = CliRunner(env=env).invoke(mind_command, args, catch_exceptions=False)
    assert done.exit_code == 0, done.stderr
    return done


@dataclass
class Served:
    """A running `mind serve`: its URL, the mind's name and token, and its home."""

    url: str
    name: str
    token: str
    home: Path
    process: subprocess.Popen[str]


def start_server(home: Path, now: str | None = None) -> Served:
    """`mind serve --port 0` on `home`; returns once it has said where it listens."""
    env = subprocess_env(home, MIND_NO_SERVER="1", LITELLM_OFFLINE_MODE="true")
    # No provider key or base reaches the server: a turn on a hosted model fails here, never
    # calls out (the failure test relies on it).
    env = {k: v for k, v in env.items() if not k.endswith(("_API_KEY", "_API_BASE"))}
    if now:
        env["MIND_NOW"] = now
    token = in_process(home, ["serve", "--print-token"], now).stdout.strip()
    process = subprocess.Popen(
        [*MIND, "serve", "--port", "0", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # the ready line (the server exits on failure: EOF)
    if not line:
        process.wait(timeout=30)
        error = process.stderr.read() if process.stderr else ""
        raise AssertionError(f"mind serve did not start: {error}")
    ready = json.loads(line)
    return Served(ready["url"], ready["minds"][0], token, home, process)


def stop_server(served: Served) -> None:
    """SIGTERM, then SIGKILL if it lingers (the process group: nothing is left behind)."""
    if served.process.poll() is None:
        os.killpg(served.process.pid, signal.SIGTERM)
        try:
            served.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(served.process.pid, signal.SIGKILL)
            served.process.wait(timeout=10)
    for stream in (served.process.stdout, served.process.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """Start servers on homes under tmp_path; every one is stopped afterwards."""
    started: list[Served] = []

    def start(home: Path, now: str | None = None) -> Served:
        served = start_server(home, now)
        started.append(served)
        return served

    yield start
    for served in started:
        stop_server(served)


@pytest.fixture
def new_mind(tmp_path: Path) -> Callable[..., Path]:
    """A new mind called Echo (created at `now` when given) in a fresh home, set to `model`
    (None: the default, the embedded one, whose client the server warms)."""
    count = [0]

    def make(now: str | None = None, model: str | None = "mock") -> Path:
        count[0] += 1
        home = tmp_path / f"mind{count[0]}"
        # In-process: the server and the page are under test, not `mind init`. The scripted
        # mock by default: a server warms LiteLLM (seconds of CPU) for any other model, and
        # each turn here names its model.
        for args in (["init", "--name", "Echo"], *([["model", "set", model]] if model else [])):
            in_process(home, args, now)
        return home

    return make


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium per test process (each server has its own origin, so nothing a
    page keeps in sessionStorage crosses between tests)."""
    _require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="mind-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1200,900")
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        subprocess.run(["rm", "-rf", profile], check=False)


def wait_for(driver: Any, condition: Callable[[Any], Any], what: str) -> Any:
    """Poll the page until `condition` holds (selenium's explicit wait; no sleeps). An element
    the page replaced while the condition read it (a list re-rendered) is polled again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, WAIT_S, ignored_exceptions=(StaleElementReferenceException,))
    return wait.until(condition, message=f"waiting for {what}")


def log_in(driver: Any, served: Served) -> None:
    """Open the page and log in with the mind's token through the login form."""
    from selenium.webdriver.common.by import By

    driver.get(served.url + "/")
    token = wait_for(driver, lambda d: d.find_element(By.ID, "token"), "the login form")
    wait_for(driver, lambda d: token.is_displayed(), "the login form to show")
    token.send_keys(served.token)
    driver.find_element(By.CSS_SELECTOR, "#login-form button").click()
    wait_for(driver, lambda d: d.find_element(By.ID, "nav").is_displayed(), "the views")


def show(driver: Any, served: Served, view: str) -> Any:
    """Go to a view and return its section once it is shown."""
    from selenium.webdriver.common.by import By

    driver.get("about:blank")  # a full load: the section found below is the new one
    driver.get(f"{served.url}/#{view}")
    return wait_for(
        driver,
        lambda d: d.find_element(By.CSS_SELECTOR, f'#view section[data-view="{view}"]'),
        f"the {view} view",
    )


__all__ = ["REPO", "Served", "log_in", "mind", "show", "wait_for"]
