"""A forget keeps the cached vectors of the questions the mind still holds (the next ask does
not embed them all again) and drops every other row, the forgotten question's among them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from mindledger.compose import Home, home_text_keys
from mindledger.domain.text_keys import EMBEDDINGS
from tests.conftest import Result
from tests.e2e.forget_memories import forget, verified

Cli = Callable[..., Result]
GONE = "Where does the Zqxheron nest?"
KEPT = "What colour is the lantern?"


def ask(cli: Cli, question: str, reply: str) -> str:
    asked = cli("ask", question, "--model", "mock", "--mock-reply", reply, "--json")
    assert asked.exit_code == 0, asked.stderr
    return str(asked.json()["item"]["id"])


def cached_keys(home: Path) -> set[str]:
    con = sqlite3.connect(home / "embeddings.sqlite")
    try:
        return {str(k) for (k,) in con.execute("SELECT key FROM vectors")}
    finally:
        con.close()


def test_a_forget_keeps_the_vectors_of_the_questions_that_stay_and_no_other(
    cli: Cli, mind_home: Path
) -> None:
    doomed = ask(cli, GONE, "On the cliff.")
    ask(cli, KEPT, "Green.")
    ask(cli, "Is the lantern lit?", "Yes.")  # embeds the stored questions
    keys = home_text_keys(Home(mind_home))
    gone, kept = keys.keyed(EMBEDDINGS, GONE), keys.keyed(EMBEDDINGS, KEPT)
    assert {gone, kept} <= cached_keys(mind_home)

    done = forget(cli, "--knowledge", doomed)

    assert done.exit_code == 0, done.stderr
    left = cached_keys(mind_home)
    assert kept in left
    assert gone not in left
    assert not list(mind_home.glob("embeddings.sqlite.*"))
    assert verified(cli)
