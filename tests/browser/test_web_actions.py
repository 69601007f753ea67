"""The page acts, not only shows: Enter sends a message (Shift+Enter a new line), the owner
closes a commitment, resolves a thread, defines and aliases a concept and forgets (a dry run
first, then a confirmation), each through the /v1 API; and every view fits a 390 px screen.

One served mind for the module (each test acts on its own items, so any order works)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from mindledger.domain.budgets import DEFAULT_BUDGET, TURN_BUDGET_FLOOR
from tests.browser.conftest import (
    Served,
    in_process,
    show,
    start_server,
    stop_server,
    wait_for,
)

NOW = "2026-05-01T09:00:00Z"
PHONE = (390, 844)
FILE_NAME = r"[\w/-]+\.(?:py|js|css|html|json|sqlite|duckdb)\b"  # a source or home file
VIEWS = ("chat", "ledger", "commitments", "threads", "concepts", "identity", "knowledge", "recall")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Echo on the mock model with two commitments, two threads, related concepts and one
    knowledge item; their ids under `served.made`."""
    home: Path = tmp_path_factory.mktemp("actions") / "echo"
    for args in (
        ["init", "--name", "Echo"],
        ["model", "set", "mock"],
        ["commit", "Water the ferns"],
        ["commit", "Call the plumber Zqxpipes"],
        ["thread", "open", "First frost?", "--content", "When to bring the ferns in"],
        ["thread", "open", "Which seeds?", "--content", "The catalogue comes in June"],
        ["concept", "define", "garden.ferns", "The ferns by the door"],
        ["concept", "define", "garden.beds", "The three raised beds"],
        ["concept", "relate", "garden.ferns", "garden.beds", "--as", "next_to"],
        ["remember", "Under the blue pot", "--question", "Spare key?"],
    ):
        in_process(home, args, NOW)
    running = start_server(home)
    try:
        yield running
    finally:
        stop_server(running)


def ids(served: Served, *args: str) -> list[str]:
    """The ids a listing prints (`mind commitments --json`, `mind threads --json`)."""
    rows = json.loads(in_process(served.home, [*args, "--json"]).stdout)
    return [str(r.get("cid") or r.get("id")) for r in rows]


def log_in(browser: Any, served: Served) -> None:
    """Keep the mind's token where the page keeps it (its login is tested elsewhere)."""
    browser.get(served.url + "/")
    session = json.dumps({"token": served.token, "mind": served.name})
    browser.execute_script("sessionStorage.setItem('mindledger', arguments[0])", session)


def press(browser: Any, selector: str) -> None:
    """Click what `selector` finds, again if the page drew it anew just then."""
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, selector).click() or True, selector)


def status(browser: Any, starts: str) -> str:
    """The page's status line once it starts with `starts`."""
    found: str = wait_for(
        browser,
        lambda d: (t := d.find_element(By.ID, "status").text).startswith(starts) and t,
        f"the status {starts!r}",
    )
    return found


def test_enter_sends_the_message_and_shift_enter_starts_a_new_line(
    browser: Any, served: Served
) -> None:
    log_in(browser, served)
    chat = show(browser, served, "chat")
    budget = chat.find_element(By.ID, "budget")
    chat.find_element(By.CSS_SELECTOR, "#chat-form details summary").click()
    chat.find_element(By.ID, "mock-reply").send_keys("They are watered.")
    message = chat.find_element(By.ID, "message")

    message.send_keys("Water the ferns", Keys.SHIFT, Keys.ENTER, Keys.SHIFT, "and the palms")
    typed = message.get_attribute("value")
    unsent = chat.find_elements(By.CSS_SELECTOR, "article.turn")
    message.send_keys(Keys.ENTER)
    turn = wait_for(
        browser, lambda d: d.find_element(By.CSS_SELECTOR, "article.turn[data-turn]"), "the turn"
    )
    said = [p.text for p in turn.find_elements(By.CSS_SELECTOR, ".said")]
    live = browser.find_element(By.ID, "reply-live")

    assert typed == "Water the ferns\nand the palms" and unsent == []
    assert said == ["You: Water the ferns\nand the palms", "Echo: They are watered."]
    assert live.get_attribute("aria-live") == "polite"
    assert live.get_attribute("textContent") == "Echo: They are watered."
    assert message.get_attribute("value") == ""
    # The budget's default and floor are the server's.
    assert (budget.get_attribute("value"), budget.get_attribute("min")) == (
        str(DEFAULT_BUDGET),
        str(TURN_BUDGET_FLOOR),
    )


def test_the_owner_closes_a_commitment_with_a_reason(browser: Any, served: Served) -> None:
    cid = ids(served, "commitments")[0]
    log_in(browser, served)
    show(browser, served, "commitments")

    press(browser, f'button[aria-label="Close {cid}"]')
    browser.find_element(By.CSS_SELECTOR, "form.change input[name=reason]").send_keys("rained")
    browser.find_element(By.CSS_SELECTOR, "form.change button[type=submit]").click()
    said = status(browser, "Closed")
    closed = wait_for(
        browser,
        lambda d: len(t := d.find_elements(By.CSS_SELECTOR, "section table")) == 2 and t[1].text,
        "the closed table",
    )

    assert said == f"Closed {cid}: Water the ferns"
    assert cid in closed and "rained" in closed
    assert cid not in ids(served, "commitments")


def test_the_owner_resolves_a_thread_and_is_told_what_a_verdict_needs(
    browser: Any, served: Served
) -> None:
    thread = ids(served, "threads")[-1]
    log_in(browser, served)
    show(browser, served, "threads")

    press(browser, f'button[aria-label="Resolve {thread}"]')
    Select(browser.find_element(By.CSS_SELECTOR, "form.change select")).select_by_value("dissolved")
    browser.find_element(By.CSS_SELECTOR, "form.change button[type=submit]").click()
    refused = status(browser, "Nothing changed")
    reason = browser.find_element(By.CSS_SELECTOR, "form.change input[name=reason]")
    reason.send_keys("We bought seedlings")
    browser.find_element(By.CSS_SELECTOR, "form.change button[type=submit]").click()
    said = status(browser, "Resolved")

    assert "reason" in refused
    assert said == f"Resolved {thread} as dissolved."
    assert thread not in ids(served, "threads")
    assert browser.find_elements(By.CSS_SELECTOR, f'[data-thread="{thread}"]') == []


def test_the_owner_defines_and_aliases_a_concept(browser: Any, served: Served) -> None:
    log_in(browser, served)
    show(browser, served, "concepts")

    press(browser, 'button[aria-label="Define garden.beds"]')
    field = browser.find_element(By.CSS_SELECTOR, "form.change textarea[name=definition]")
    field.clear()
    field.send_keys("Three raised beds by the fence")
    browser.find_element(By.CSS_SELECTOR, "form.change button[type=submit]").click()
    defined = status(browser, "Defined")
    press(browser, 'button[aria-label="Alias garden.beds"]')
    browser.find_element(By.CSS_SELECTOR, "form.change input[name=alias]").send_keys("beds")
    browser.find_element(By.CSS_SELECTOR, "form.change button[type=submit]").click()
    aliased = status(browser, "garden.beds")
    row = wait_for(
        browser,
        lambda d: next(
            r.text for r in d.find_elements(By.CSS_SELECTOR, "tbody tr") if "garden.beds" in r.text
        ),
        "the concept's row",
    )

    assert defined == "Defined garden.beds (version 2)."
    assert aliased == "garden.beds is also called beds."
    assert "Three raised beds by the fence" in row and "beds" in row


def test_forget_shows_what_would_go_and_forgets_only_once_confirmed(
    browser: Any, served: Served
) -> None:
    cid = ids(served, "commitments")[-1]  # the plumber's (the other may be closed by now)
    log_in(browser, served)
    show(browser, served, "commitments")

    press(browser, f'button[aria-label="Forget {cid}"]')
    plan = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".forget-plan").text, "plan")
    browser.find_element(By.CSS_SELECTOR, ".forget button.quiet").click()
    kept = status(browser, "Kept")
    still = ids(served, "commitments")
    press(browser, f'button[aria-label="Forget {cid}"]')
    press(browser, "button[data-action=confirm-forget]")
    said = status(browser, "Forgot")

    counts = r"\d+ events, \d+ keys(, and the sent prompts of \d+ turns that quoted it)?"
    assert re.fullmatch(rf"Would forget commitment {cid}: {counts}\.", plan), plan
    assert kept == f"Kept commitment {cid}: nothing was forgotten."
    assert cid in still
    assert said.startswith(f"Forgot commitment {cid}: ")
    assert cid not in ids(served, "commitments")
    assert "Zqxpipes" not in browser.find_element(By.ID, "view").text


def test_the_ledger_forgets_by_any_selector_and_says_when_it_names_nothing(
    browser: Any, served: Served
) -> None:
    log_in(browser, served)
    ledger = show(browser, served, "ledger")
    ledger.find_element(By.CSS_SELECTOR, "details.host summary").click()

    Select(ledger.find_element(By.ID, "forget-kind")).select_by_value("before")
    ledger.find_element(By.ID, "forget-value").send_keys("2001-01-01T00:00:00Z")
    ledger.find_element(By.CSS_SELECTOR, "details.host button[type=submit]").click()
    said = status(browser, "Nothing changed")
    options = [o.text for o in Select(ledger.find_element(By.ID, "forget-kind")).options]

    assert said.startswith("Nothing changed: ") and "names nothing this mind holds" in said
    assert options == [
        "turn",
        "conversation",
        "speaker",
        "commitment",
        "concept",
        "thread",
        "knowledge",
        "before",
    ]


def test_every_view_fits_a_390_px_screen_with_readable_graph_labels(
    browser: Any, served: Served
) -> None:
    log_in(browser, served)
    browser.set_window_size(*PHONE)
    wide: dict[str, int] = {}
    source_names: dict[str, list[str]] = {}
    try:
        for view in VIEWS:
            show(browser, served, view)
            if view == "ledger":  # its verdict names the anchors it checked
                press(browser, "#verify")
                wait_for(
                    browser, lambda d: "OK" in d.find_element(By.ID, "verify-result").text, "OK"
                )
            width = browser.execute_script(
                "return [document.scrollingElement.scrollWidth, innerWidth]"
            )
            if width[0] > width[1]:
                wide[view] = width[0]
            text = browser.find_element(By.TAG_NAME, "body").text
            source_names[view] = re.findall(FILE_NAME, text)
            if view == "concepts":
                labels = browser.execute_script(
                    "return [...document.querySelectorAll('svg.graph g text')]"
                    ".map((t) => t.getBoundingClientRect().height)"
                )
    finally:
        browser.set_window_size(1200, 900)

    assert wide == {}
    assert {v: names for v, names in source_names.items() if names} == {}
    assert len(labels) == 2 and min(labels) >= 12  # a 13 px label, drawn at 13 px
