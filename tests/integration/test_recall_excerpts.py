"""Long messages enter recall as their best-matching passage, with where it lies in the stored
text; on a small long-message conversation (`bench.longmsg_data`) recall holds more of the
evidence than a plain BM25 packed by the same `fit` at 2,000 tokens."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from bench.longmsg import baseline_items, found, load
from bench.longmsg_data import conversation
from mindledger.compose import Home, read_model
from mindledger.domain.prompt_text import one_line
from mindledger.projections.retrieval.context import fit
from mindledger.projections.retrieval.excerpts import (
    EXCERPT_CHARS,
    LONG_CHARS,
    asks_number,
    passage,
    units,
)
from mindledger.projections.retrieval.recall import recall
from tests.conftest import Result
from tests.integration.test_recall_exactness import NOW

REPLY = " ".join(f"Sentence {n} talks about the deploy pipeline in general." for n in range(60))


def test_a_passage_is_where_the_rarer_query_words_are() -> None:
    text = REPLY[:2000] + " The staging pool holds 340 connections since May. " + REPLY[2000:]

    start, end = passage(text, {"pool": 3.0, "connection": 2.0, "deploy": 0.1})

    assert "340 connections" in text[start:end]
    assert end - start <= EXCERPT_CHARS
    assert passage(REPLY, {"invoice": 2.0})[0] == 0  # nothing matches: the opening


def test_a_question_asking_for_a_number_prefers_the_equal_passage_holding_one() -> None:
    advice = "Think about the retry budget before the next release. " * 20
    text = advice + "The retry budget we set is 340 attempts. " + advice

    start, end = passage(text, {"retry": 1.0, "budget": 1.0}, 120, asks_number("How many?"))

    assert "340 attempts" in text[start:end]
    assert not asks_number("Who owns the pipeline?")


def test_units_cut_a_long_line_at_spaces() -> None:
    spans = units("word " * 400)

    assert all(e - s <= EXCERPT_CHARS // 2 for s, e in spans)
    assert "".join("word " * 400 for _ in [0]) == "".join(("word " * 400)[s:e] for s, e in spans)


def test_recall_on_long_messages_enters_passages_and_beats_bm25(tmp_path: Path) -> None:
    conv = conversation(11, sessions=4, exchanges=4)
    ids = load(conv, tmp_path / "mind")
    stored = {ids[n]: text for n, (_, text, _) in enumerate(conv.messages)}
    ours, bm25 = [], []

    with read_model(Home(tmp_path / "mind")) as con:
        for q in conv.questions:
            context = recall(con, q.text, 2000, NOW)
            ours.append(found(context, q, ids)["strict"])
            words = set(q.text.lower().split())
            order = sorted(
                baseline_items(conv, ids),
                key=lambda i: -len(words & set(stored[i.id].lower().split())),
            )
            bm25.append(found(fit(order, 2000), q, ids)["strict"])
            for item in context.items:
                if item.excerpt is not None and not item.clipped:
                    start, end, whole = item.excerpt
                    assert whole == len(stored[item.id]) > LONG_CHARS
                    assert one_line(stored[item.id][start:end].strip()) in item.text
                    assert item.record()["excerpt"] == [start, end, whole]

    assert any(i.excerpt for i in context.items)
    assert sum(ours) > sum(bm25)
    assert sum(ours) / len(ours) >= 0.8


def test_a_turn_records_the_passage_it_was_given_and_recall_json_shows_it(
    cli: Callable[..., Result], mind_home: Path, tmp_path: Path
) -> None:
    advice = "Think about the deploy pipeline before the next release. " * 40
    reply = (advice + "The staging pool holds 340 connections since May. " + advice).strip()
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        json.dumps({"role": "user", "content": "how is staging?"})
        + "\n"
        + json.dumps({"role": "assistant", "content": reply})
        + "\n"
    )
    assert cli("import", "chat", str(chat)).exit_code == 0

    turn = json.loads(
        cli(
            "turn",
            "How big is the staging pool?",
            "--model",
            "mock",
            "--mock-reply",
            "340.",
            "--json",
        ).output
    )
    recalled = json.loads(
        cli("recall", "How big is the staging pool?", "--budget", "300", "--json").output
    )

    cut = [i for i in turn["context"] if i.get("excerpt")]
    shown = [i for i in recalled["items"] if i["excerpt"]]
    assert len(cut) == len(shown) == 1
    start, end, whole = shown[0]["excerpt"]
    assert whole == len(reply) and "340 connections" in reply[start:end]
    assert "340 connections" in shown[0]["text"] and shown[0]["text"].endswith("…")
