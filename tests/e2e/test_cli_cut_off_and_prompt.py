"""`mind turn` on a cut-off reply, `mind log --turn` and chat's `/prompt`, end to end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result
from tests.integration.fake_provider import scripted_provider

Cli = Callable[..., Result]


def test_a_cut_off_turn_exits_0_and_says_it_was_cut_off(cli: Cli, mind_home: Path) -> None:
    with scripted_provider("You promised the weekly report, and the", "length") as (base, _):
        text = cli("turn", "What did I promise?", "--model", "openai/fake", "--api-base", base)
        data = cli("turn", "And?", "--model", "openai/fake", "--api-base", base, "--json").json()

    assert text.exit_code == 0
    assert text.output == "You promised the weekly report, and the\n"
    assert "cut off at the token limit (finish reason length)" in text.stderr
    assert (data["status"], data["cut_off"], data["finish_reason"]) == ("complete", True, "length")
    assert data["failure"] is None


def test_log_turn_shows_exactly_the_messages_the_model_received(cli: Cli, mind_home: Path) -> None:
    cli("commit", "Send the weekly report on Friday")
    with scripted_provider("The weekly report.") as (base, received):
        turn = cli(
            "turn", "What did I promise?", "--model", "openai/fake", "--api-base", base, "--json"
        ).json()["turn"]

    shown = cli("log", "--turn", turn, "--json").json()
    text = cli("log", "--turn", turn[:8]).output

    assert shown["messages"] == received[0]["messages"]
    assert shown["status"] == "complete"
    system = received[0]["messages"][0]["content"]
    assert text == (
        f"turn {turn} (complete, model openai/fake):\n--- system ---\n{system}\n"
        "--- user ---\nWhat did I promise?\n"
    )


def test_log_turn_with_an_unknown_id_is_a_one_line_error(cli: Cli, mind_home: Path) -> None:
    result = cli("log", "--turn", "abcdef12")

    assert result.exit_code == 1
    assert result.stderr.strip() == "Error: no turn has an id starting with abcdef12"


def test_chat_prompt_shows_the_last_turns_messages(cli: Cli, mind_home: Path) -> None:
    with scripted_provider("Sure.") as (base, received):
        result = cli(
            "chat",
            "--model",
            "openai/fake",
            "--api-base",
            base,
            input="/prompt\nremind me to stretch\n/prompt\n/exit\n",
        )

    assert result.exit_code == 0
    assert "no turn yet" in result.output
    sent = received[0]["messages"]
    assert f"--- system ---\n{sent[0]['content']}\n--- user ---\nremind me to stretch\n" in (
        result.output
    )


def test_log_turn_last_shows_the_latest_turns_prompt_and_a_mind_without_turns_says_so(
    cli: Cli, mind_home: Path
) -> None:
    before = cli("log", "--turn", "last")
    with scripted_provider("Noted.") as (base, received):
        cli("turn", "first", "--model", "openai/fake", "--api-base", base)
        cli("turn", "second", "--model", "openai/fake", "--api-base", base)

    shown = cli("log", "--turn", "last", "--json").json()

    assert before.exit_code == 1
    assert before.stderr.startswith("Error: this mind has had no turn yet")
    assert shown["messages"] == received[-1]["messages"]


def test_log_turn_writes_out_what_a_terminal_would_obey_in_a_callers_messages(
    cli: Cli, mind_home: Path
) -> None:
    """A client's tool result, tool call arguments and earlier messages reached the terminal
    as sent: an OSC title, a screen clear, a direction override (found trying decision 0020
    as an attacker). JSON keeps them, escaped."""
    import mindledger

    history = [
        {"role": "user", "content": "weather \u202e?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "w", "arguments": '{"x": "\x1b[2J"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "\x1b]0;owned\x07 cold\tand grey"},
    ]
    with mindledger.open(mind_home) as mind:
        turn = mind.turn("And?", model="mock", mock_reply="Ok.", history=history).turn

    text = cli("log", "--turn", turn).output
    shown = cli("log", "--turn", turn, "--json").json()

    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b]0;owned\\x07 cold\tand grey" in text and "weather \\u202e?" in text
    assert shown["messages"][3]["content"] == "\x1b]0;owned\x07 cold\tand grey"
