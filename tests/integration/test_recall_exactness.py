"""Lexical exactness: recalling a stored item's exact text ranks that item first, ahead of the
open commitments, live threads and the identity that otherwise lead every recall."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from mindledger.adapters.importers import import_chat
from mindledger.compose import Home, read_model
from mindledger.domain.prompt_text import one_line
from mindledger.projections.retrieval.exact import INSIDE, WHOLE, exact_lead, tier, words
from mindledger.projections.retrieval.recall import recall
from tests.integration.ledger_factory import sqlite_mind

NOW = datetime(2026, 3, 1, tzinfo=UTC)
CHAT = [
    ("user", "I adopted a cat named Miso last spring"),
    ("assistant", "Miso is a lovely name for a cat. How is she settling in?"),
    ("user", "She sleeps on the radiator and ignores the new cat tree"),
    ("assistant", "Cats often prefer warm spots to the furniture bought for them."),
    ("user", "The vet said Miso needs her booster shot in April"),
    ("assistant", "Noted: the booster shot is due in April."),
    ("user", "call Bob"),
    ("user", "remind me to call Bob about the invoice tomorrow"),
    # Shown on one line as `...list\nbring the ...`: it still leads for its own text.
    ("user", "The packing list\nbring the tent and the stove"),
]
COMMITMENTS = [
    "Book the vet appointment for the booster shot",
    "Renew the passport before the trip to Lisbon",
    "Send Bob the corrected invoice",
    "Promise number 1",
    "Promise number 10",
    "Fix the parser where a <b tag breaks",  # shown with `&lt;`
]
THREADS = [("Lisbon hotel", "which neighbourhood should we stay in"), ("Cat tree", "return it?")]
CONCEPTS = [("pet.miso", "The user's cat, adopted last spring")]


def fixture_mind(path: Path) -> list[tuple[str, str]]:
    """A mind holding messages, open commitments, threads and a concept: (kind, text) of each."""
    app = sqlite_mind(path, commands=0)
    chat = path / "chat.jsonl"
    chat.write_text("".join(json.dumps({"role": r, "content": t}) + "\n" for r, t in CHAT))
    import_chat(app, chat)
    for text in COMMITMENTS:
        app.open_commitment(text)
    for label, content in THREADS:
        app.open_thread(label, content)
    for token, definition in CONCEPTS:
        app.define_concept(token, definition)
    return (
        [("message", t) for _, t in CHAT]
        + [("commitment", t) for t in COMMITMENTS]
        + [("thread", f"{label}: {content}") for label, content in THREADS]
        + [("concept", d) for _, d in CONCEPTS]
    )


def test_recalling_any_stored_items_exact_text_ranks_that_item_first(tmp_path: Path) -> None:
    stored = fixture_mind(tmp_path)

    with read_model(Home(tmp_path)) as con:
        firsts = {text: recall(con, text, 2000, NOW).items[0] for _, text in stored}

    for kind, text in stored:
        first = firsts[text]
        assert (first.kind, one_line(text) in first.text) == (kind, True), (text, first.text)
        assert first.reason.startswith("exact: the query is its text")


def test_a_query_held_verbatim_by_one_item_leads_but_a_common_phrase_does_not() -> None:
    class Item:
        def __init__(self, id_: int, text: str) -> None:
            self.id, self.text = id_, text

    items = [Item(1, "[user] call Bob"), Item(2, "[user] remind me to call Bob tomorrow")]
    items += [Item(10 + n, f"[user] the cat sat here {n}") for n in range(5)]

    assert exact_lead("call Bob", items) == {1: WHOLE, 2: INSIDE}
    assert exact_lead("the cat", items) == {}  # five items hold it: no one item's
    assert tier(words("promise number 1"), "[commitment c1 open] Promise number 10") == 0
    assert tier(words("bob called"), "[user] call Bob") == 0
