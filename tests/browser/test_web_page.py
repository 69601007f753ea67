"""The web page in a real browser against a real `mind serve`: login, a streamed turn and why it
answered as it did, threads by tension, verify on a tampered ledger, stored text kept as text,
and `mind open`'s one-time link."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By

from tests.browser.conftest import Served, log_in, mind, show, wait_for
from tests.tool_turns import NOW as TOOLS_NOW
from tests.tool_turns import record_tool_turns

NewMind = Callable[..., Path]
Serve = Callable[..., Served]
STORED_SCRIPT = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


def press(browser: Any, selector: str) -> None:
    """Click the element `selector` finds, again if the page redrew it just then."""
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, selector).click() or True, selector)


def texts(root: Any, selector: str) -> list[str]:
    return [e.text for e in root.find_elements(By.CSS_SELECTOR, selector)]


def test_without_a_token_the_page_shows_a_login_and_no_data(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    home = new_mind()
    mind(home, "commit", "Water the plants")
    served = serve(home)

    browser.get(f"{served.url}/#commitments")
    login = wait_for(browser, lambda d: d.find_element(By.ID, "login"), "the login")
    wait_for(browser, lambda d: login.is_displayed(), "the login to show")

    assert browser.find_element(By.ID, "token").get_attribute("type") == "password"
    assert not browser.find_element(By.ID, "nav").is_displayed()
    assert browser.find_element(By.ID, "view").text == ""
    assert "Water the plants" not in browser.page_source


def test_a_wrong_token_is_refused_at_the_login(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    served = serve(new_mind())
    browser.get(served.url + "/")
    token = wait_for(browser, lambda d: d.find_element(By.ID, "token"), "the login form")

    token.send_keys("not-the-token")
    browser.find_element(By.CSS_SELECTOR, "#login-form button").click()
    error = wait_for(browser, lambda d: d.find_element(By.ID, "login-error").text, "the refusal")

    assert error == "That token opens no mind on this server."
    assert not browser.find_element(By.ID, "nav").is_displayed()


def test_a_scripted_reply_streams_in_with_its_context_and_the_commitment_it_opened(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    served = serve(new_mind())
    log_in(browser, served)
    chat = show(browser, served, "chat")

    chat.find_element(By.ID, "message").send_keys("Please remember the plants")
    chat.find_element(By.CSS_SELECTOR, "#chat-form details summary").click()
    chat.find_element(By.ID, "model").send_keys("mock")
    chat.find_element(By.ID, "mock-reply").send_keys("I will water them.\nCOMMIT: water the plants")
    chat.find_element(By.ID, "send").click()
    turn = wait_for(
        browser, lambda d: d.find_element(By.CSS_SELECTOR, "article.turn[data-turn]"), "the turn"
    )
    turn.find_element(By.CSS_SELECTOR, "details.why summary").click()
    detail = wait_for(browser, lambda d: turn.find_element(By.CSS_SELECTOR, ".detail"), "why")
    context_rows = [
        texts(row, "td")
        for row in detail.find_elements(By.CSS_SELECTOR, "table")[0].find_elements(
            By.CSS_SELECTOR, "tbody tr"
        )
    ]
    effects = detail.find_elements(By.CSS_SELECTOR, "table")[1].text
    said = texts(turn, ".said")
    commitments = show(browser, served, "commitments")
    open_rows = wait_for(
        browser, lambda d: commitments.find_elements(By.CSS_SELECTOR, "tbody tr"), "the rows"
    )

    assert said == ["You: Please remember the plants", "Echo: I will water them."]
    assert context_rows[0][:3] == ["1", "identity", "identity"]
    assert context_rows[0][-1] == "[identity] Your name is Echo."
    assert "commitment.opened" in effects and "water the plants" in effects
    assert [texts(r, "td")[3] for r in open_rows] == ["water the plants"]
    assert texts(open_rows[0], "td")[4].endswith("by assistant (turn 1)")


def test_threads_are_listed_by_tension_each_with_its_chart(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    home = new_mind(now="2026-05-01T08:00:00Z")
    for label, opened in [
        ("The launch date", "2026-05-01T09:00:00Z"),
        ("Ask about the plans", "2026-05-02T09:00:00Z"),
        ("Why did the import fail?", "2026-05-03T09:00:00Z"),
    ]:
        mind(home, "thread", "open", label, "--content", "Come back to it", now=opened)
    served = serve(home, now="2026-05-06T09:00:00Z")
    log_in(browser, served)

    threads = show(browser, served, "threads")
    cards = threads.find_elements(By.CSS_SELECTOR, "#thread-list > li")
    tensions = [float(c.text.split("tension ")[1].split(" ")[0]) for c in cards]

    assert [c.find_element(By.TAG_NAME, "h3").text for c in cards] == [
        "The launch date open",
        "Ask about the plans open",
        "Why did the import fail? open",
    ]
    assert tensions == sorted(tensions, reverse=True) and tensions[-1] > 0
    assert all(c.find_element(By.CSS_SELECTOR, "svg.chart path") for c in cards)


def test_verify_names_the_first_bad_position_of_a_tampered_copy(
    browser: Any, new_mind: NewMind, serve: Serve, tmp_path: Path
) -> None:
    home = new_mind()
    for text in ("one", "two", "three"):
        mind(home, "commit", f"Promise {text}")
    copy = tmp_path / "tampered"
    shutil.copytree(home, copy)
    con = sqlite3.connect(copy / "ledger.sqlite")
    # A clear field: the promise's words are sealed, so 'two' is not in the stored bytes.
    con.execute(
        'UPDATE stored_events SET state = replace(state, \'"origin":"owner"\', '
        '\'"origin":"model"\') WHERE rowid = 3'
    )
    state = con.execute("SELECT state FROM stored_events WHERE rowid = 3").fetchone()[0]
    assert '"origin":"model"' in state
    con.commit()
    con.close()
    served = serve(copy)
    log_in(browser, served)

    ledger = show(browser, served, "ledger")
    ledger.find_element(By.ID, "verify").click()
    result = wait_for(
        browser,
        lambda d: (
            "BROKEN" in d.find_element(By.ID, "verify-result").text
            and d.find_element(By.ID, "verify-result").text
        ),
        "the verdict",
    )

    assert result.startswith("BROKEN at position 3: payload changed")


def test_stored_markup_is_shown_as_text_and_never_runs(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    home = new_mind()
    mind(home, "commit", STORED_SCRIPT)
    served = serve(home)
    log_in(browser, served)

    commitments = show(browser, served, "commitments")
    cells = texts(commitments, "tbody td")

    assert STORED_SCRIPT in cells
    assert commitments.find_elements(By.TAG_NAME, "img") == []
    assert commitments.find_elements(By.TAG_NAME, "script") == []
    assert browser.execute_script("return window.pwned") is None


def test_mind_open_s_link_logs_in_once(browser: Any, new_mind: NewMind, serve: Serve) -> None:
    home = new_mind()
    served = serve(home)
    url = mind(home, "open", "--json")["url"]

    browser.get("about:blank")
    browser.get(url)
    wait_for(browser, lambda d: d.find_element(By.ID, "nav").is_displayed(), "the views")
    name = browser.find_element(By.ID, "mind-name").text
    browser.execute_script("sessionStorage.clear()")
    browser.get("about:blank")
    browser.get(url)
    error = wait_for(browser, lambda d: d.find_element(By.ID, "login-error").text, "the refusal")

    assert url.startswith(served.url + "/#login=")
    assert name == "Echo"
    assert error == "this login link was used or has expired"


def test_a_failed_generation_is_shown_as_failed_and_the_message_kept(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    home = new_mind(model=None)  # the server warms LiteLLM, which the hosted model needs
    served = serve(home)
    log_in(browser, served)
    chat = show(browser, served, "chat")

    chat.find_element(By.ID, "message").send_keys("Is anyone there?")
    chat.find_element(By.CSS_SELECTOR, "#chat-form details summary").click()
    chat.find_element(By.ID, "model").send_keys("openai/gpt-4o-mini")
    chat.find_element(By.ID, "send").click()
    turn = wait_for(
        browser, lambda d: d.find_element(By.CSS_SELECTOR, "article.turn.failed"), "the failure"
    )
    said = texts(turn, ".said")
    kept = show(browser, served, "chat")

    assert said[0] == "You: Is anyone there?"
    assert said[1].startswith("Generation failed: ")
    assert said[1].endswith("(your message is kept in the ledger)")
    assert texts(kept, "article.turn.failed .said")[0] == "You: Is anyone there?"


def test_the_owner_verifies_an_item_from_the_knowledge_view_and_sees_its_state_change(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    home = new_mind()
    kept = mind(home, "remember", "Under the blue pot", "--question", "Spare key?", "--json")
    served = serve(home)
    log_in(browser, served)
    show(browser, served, "knowledge")
    verify = wait_for(
        browser,
        lambda d: d.find_element(By.CSS_SELECTOR, f'button[aria-label="Verify {kept["id"]}"]'),
        "the item's verify button",
    )
    wait_for(
        browser,
        lambda d: "unverified" in texts(d.find_element(By.ID, "k-list"), "tbody td"),
        "the item's state",
    )

    verify.send_keys(" ")  # pressed from the keyboard
    status = wait_for(
        browser,
        lambda d: "verify done" in (t := d.find_element(By.ID, "k-status").text) and t,
        "the decision to be recorded",
    )
    # The list is drawn again after a decision: read and press what the page shows by then.
    cells = wait_for(
        browser,
        lambda d: "verified" in (c := texts(d.find_element(By.ID, "k-list"), "tbody td")) and c,
        "the list to show the new state",
    )
    press(browser, f'button[aria-label="History {kept["id"]}"]')
    history = wait_for(
        browser,
        lambda d: len(rows := d.find_elements(By.CSS_SELECTOR, "#k-detail tbody tr")) == 2 and rows,
        "the item's history",
    )

    assert "verified" in status and "95.0 %" in status
    assert "verified" in cells and "unverified" not in cells and "95.0 %" in cells
    assert "judged" in history[1].text
    listed = mind(home, "knowledge", "list", "--json")
    assert [(k["item_id"], k["state"]) for k in listed] == [(kept["id"], "verified")]


def test_the_owner_edits_then_deletes_an_item_after_confirming(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    home = new_mind()
    kept = mind(home, "remember", "4711", "--question", "Door code?", "--json")
    served = serve(home)
    log_in(browser, served)
    show(browser, served, "knowledge")
    button = f'button[aria-label="{{}} {kept["id"]}"]'
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, button.format("Edit")), "edit")

    press(browser, button.format("Edit"))
    answer = browser.find_element(By.ID, f"k-edit-{kept['id']}")
    answer.clear()
    answer.send_keys(STORED_SCRIPT)
    browser.find_element(By.CSS_SELECTOR, ".k-edit button[type=submit]").click()
    wait_for(
        browser,
        lambda d: STORED_SCRIPT in texts(d.find_element(By.ID, "k-list"), "tbody td"),
        "the edited answer",
    )
    press(browser, button.format("Delete"))
    alert = wait_for(browser, lambda d: d.switch_to.alert, "the confirmation")
    alert.accept()
    wait_for(
        browser,
        lambda d: "Nothing known yet." in d.find_element(By.ID, "k-list").text,
        "the item to leave the list",
    )

    assert browser.execute_script("return window.pwned") is None
    assert mind(home, "knowledge", "list", "--json") == []
    everything = mind(home, "knowledge", "list", "--all", "--json")
    assert [(k["revision"], k["deleted"]) for k in everything] == [(3, True)]


def test_a_turn_s_tool_calls_and_the_results_that_follow_it_show_as_text(
    browser: Any, new_mind: NewMind, serve: Serve
) -> None:
    home = new_mind(now=TOOLS_NOW)
    asked, _ = record_tool_turns(home, STORED_SCRIPT)
    served = serve(home)
    log_in(browser, served)

    chat = show(browser, served, "chat")
    cards = wait_for(
        browser, lambda d: len(chat.find_elements(By.CSS_SELECTOR, "article.turn")) == 2, "turns"
    ) and chat.find_elements(By.CSS_SELECTOR, "article.turn")
    cards[1].find_element(By.CSS_SELECTOR, "details.why summary").click()
    detail = wait_for(browser, lambda d: cards[1].find_element(By.CSS_SELECTOR, ".detail"), "why")

    assert texts(cards[0], ".said")[0] == "You: What is the weather in Paris?"
    assert texts(cards[0], ".tool-calls li") == ['get_weather({"city": "Paris"})']
    assert texts(cards[1], ".reply") == ["Echo: It is 18 degrees and sunny in Paris."]
    assert texts(cards[1], ".tool-results li") == [f"call_{asked}00: {STORED_SCRIPT}"]
    assert f"for the calls of turn {asked[:12]}" in cards[1].text
    assert texts(detail, ".follows") == [f"They answer the calls of turn {asked}."]
    assert STORED_SCRIPT in texts(detail, "td")
    assert chat.find_elements(By.TAG_NAME, "img") == []
    assert browser.execute_script("return window.pwned") is None
