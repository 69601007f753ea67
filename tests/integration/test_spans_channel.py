"""Recall's spans channel: a window of consecutive messages that together hold the query's words
lifts its messages, only when the mind's `recall.spans` setting is on."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from mindledger.adapters.importers import import_locomo
from mindledger.cli.main import mind as mind_command
from mindledger.compose import Home, read_model
from mindledger.projections.retrieval.recall import recall
from tests.integration.ledger_factory import sqlite_mind

NOW = datetime(2024, 1, 1, tzinfo=UTC)
FILLER = [f"We talked about the weather on day {i} and it was fine" for i in range(40)]


def conversation(tmp_path: Path) -> Home:
    # Ana's lake trip and the kayak she bought for it are said two turns apart; neither turn
    # holds both words.
    texts = [
        *FILLER[:20],
        "I went to the lake with my sister",
        "Nice!",
        "And I bought a red kayak",
        *FILLER[20:],
    ]
    turns = [
        {"speaker": ("Ana", "Ben")[i % 2], "dia_id": f"D1:{i + 1}", "text": t}
        for i, t in enumerate(texts)
    ]
    sample = {
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "qa": [],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    import_locomo(sqlite_mind(tmp_path, commands=0), path, None)
    return Home(tmp_path)


def test_a_window_holding_the_querys_words_lifts_its_messages_when_spans_are_on(
    tmp_path: Path,
) -> None:
    home = conversation(tmp_path)

    with read_model(home) as con:
        on = recall(con, "lake kayak", 2000, NOW, spans=True)
        off = recall(con, "lake kayak", 2000, NOW)

    spanned = {i.source_id for i in on.items if "in span #1" in i.reason}
    assert {"D1:21", "D1:23"} <= spanned
    assert not any("spans #" in i.reason for i in off.items)


def test_the_spans_setting_is_on_or_off_and_recall_follows_it(tmp_path: Path) -> None:
    conversation(tmp_path)
    runner = CliRunner()

    def mind(*args: str) -> tuple[int, str]:
        result = runner.invoke(mind_command, ["--home", str(tmp_path), *args])
        return result.exit_code, result.output

    refused = mind("config", "set", "recall.spans", "sometimes")
    assert mind("config", "set", "recall.spans", "on")[0] == 0
    code, shown = mind("recall", "lake kayak", "--json")

    assert refused[0] != 0 and "recall.spans must be on or off" in refused[1]
    assert code == 0 and "in span #1" in shown
