"""Nothing a terminal would obey is printed; the ledger keeps the text as it was; JSON stays
valid; invisible and direction-changing characters are refused in names and commitments."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]
# A colour, an OSC window-title change ending in BEL, a C1 CSI, a carriage return, a backspace,
# a direction override.
HOSTILE = "plain \x1b[31mred\x1b]0;pwned\x07 \x9b2J back\rover\x08 \u202eevil"
RAW = ("\x1b", "\x07", "\x9b", "\r", "\x08", "\u202e")


def assert_harmless(text: str) -> None:
    assert not [ch for ch in RAW if ch in text], repr(text)


def test_a_hostile_reply_is_printed_harmlessly_and_recorded_faithfully(
    cli: Cli, mind_home: Path
) -> None:
    turn = cli("turn", "paint it", "--model", "mock", "--mock-reply", HOSTILE)
    as_json = cli("turn", "again", "--model", "mock", "--mock-reply", HOSTILE, "--json")
    recall = cli("recall", "red pwned evil")
    log = cli("log")
    log_json = cli("log", "--json")

    assert turn.exit_code == as_json.exit_code == recall.exit_code == log.exit_code == 0
    assert turn.output.startswith("plain \\x1b[31mred\\x1b]0;pwned\\x07 \\x9b2J back")
    assert turn.output.endswith("over\\x08 \\u202eevil\n")
    for result in (turn, as_json, recall, log, log_json):
        assert_harmless(result.output + result.stderr)
    assert as_json.json()["reply_raw"] == HOSTILE  # JSON escapes, and is exact
    assert "\\x1b[31m" in recall.output
    replies = [e["payload"] for e in log_json.json() if e["type"] == "mind.turn.replied"]
    assert [r["reply_raw"] for r in replies] == [HOSTILE, HOSTILE]


def test_an_error_quoting_hostile_input_is_printed_harmlessly(cli: Cli, mind_home: Path) -> None:
    result = cli("c\x1b]0;pwned\x07")

    assert result.exit_code != 0
    assert_harmless(result.output + result.stderr)
    assert "\\x1b]0;pwned\\x07" in result.stderr


def test_a_direction_override_in_a_listing_is_shown_not_obeyed(cli: Cli, mind_home: Path) -> None:
    opened = cli("thread", "open", "label \u202eevil", "--content", "about \u2066it\u2069")
    threads = cli("threads")
    recall = cli("recall", "label about", "--json")

    assert opened.exit_code == threads.exit_code == recall.exit_code == 0
    assert "label \\u202eevil" in threads.output
    # Recall shows the memory as a turn's model sees it: the characters written out.
    assert any(i["text"].endswith("about \\u2066it\\u2069") for i in recall.json()["items"])
    for result in (opened, threads, recall):
        assert not {"\u202e", "\u2066", "\u2069"} & set(result.output + result.stderr)


@pytest.mark.parametrize(
    ("text", "code", "position"),
    [
        ("pay \u202eevil", "U+202E", 5),
        ("call\u200bmum", "U+200B", 5),
        ("\u2066isolate\u2069 it", "U+2066", 1),
        ("bom\ufeff inside", "U+FEFF", 4),
        ("line\u2028separator", "U+2028", 5),
    ],
)
def test_invisible_characters_are_refused_in_commitments(
    cli: Cli, mind_home: Path, text: str, code: str, position: int
) -> None:
    before = cli("log", "--json").output

    result = cli("commit", text)

    assert result.exit_code == 1
    assert f"{code} (" in result.stderr and f"at position {position};" in result.stderr
    assert cli("log", "--json").output == before


def test_invisible_characters_are_refused_in_names(cli: Cli, mind_home: Path) -> None:
    before = cli("log", "--json").output

    adopted = cli("identity", "adopt", "Ec\u202eho")
    proposed = cli(
        "turn",
        "rename",
        "--model",
        "mock",
        "--mock-reply",
        'ok\nCLAIM:identity_proposal={"name": "Ec\\u200bho"}\nCOMMIT: pay\u202elater',
        "--json",
    )

    assert adopted.exit_code == 1 and "U+202E (RIGHT-TO-LEFT OVERRIDE) at position 3" in (
        adopted.stderr
    )
    assert cli("log", "--json").output != before  # the turn itself is recorded...
    reasons = [r["reason"] for r in proposed.json()["rejections"]]
    assert any("U+200B" in r for r in reasons) and any("U+202E" in r for r in reasons)
    assert proposed.json()["opened"] == [] and proposed.json()["identity"]["changes"] == []


def test_an_init_name_with_a_direction_override_is_refused(cli: Cli, home: Path) -> None:
    result = cli("init", "--name", "\u202eohcE")

    assert result.exit_code == 1
    assert "U+202E" in result.stderr and "at position 1" in result.stderr
