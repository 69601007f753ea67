"""Turns: `mind turn` (one exchange) and `mind chat` (a REPL)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mindledger.cli.floor import opened
from mindledger.cli.options import NO_SERVER_HELP, chosen_sampling, turn_chat_options
from mindledger.cli.output import echo
from mindledger.cli.render import echo_turn
from mindledger.cli.standard_input import BOM, decoded
from mindledger.compose import Home
from mindledger.domain.budgets import DEFAULT_BUDGET, TURN_BUDGET_FLOOR


def reply_text(value: str | None) -> str | None:
    """`--mock-reply TEXT` or `@FILE` (a UTF-8 text file)."""
    from mindledger.domain.errors import InvalidInputError

    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as e:
        raise InvalidInputError(
            f"--mock-reply {value}: cannot read {path} ({e.strerror or e}); give an existing file"
        ) from None
    except UnicodeDecodeError as e:
        raise InvalidInputError(
            f"--mock-reply {value}: {path} is not UTF-8 text (byte {e.start}); "
            "re-encode it as UTF-8"
        ) from None


def stdin_text() -> str:
    """`mind turn -`: standard input, decoded strictly in its encoding (UTF-8 unless the locale
    says otherwise), newlines as in any text file; bytes that do not decode are one line. A
    UTF-8 byte-order mark (Notepad, PowerShell) is not part of the text, as in `import chat`."""
    from mindledger.domain.errors import InvalidInputError

    stream = sys.stdin
    raw = stream.buffer.read() if hasattr(stream, "buffer") else None
    if raw is None:  # a text stream only (an embedding program's): already text
        return stream.read().removeprefix(BOM)
    encoding = stream.encoding or "utf-8"
    try:
        return decoded(raw, encoding)
    except UnicodeDecodeError as e:
        raise InvalidInputError(
            f"standard input is not {encoding} text (byte {e.start} of {len(raw)}); nothing was "
            "recorded: re-encode it (iconv -t UTF-8) or pass the text as an argument"
        ) from None


def echo_effects(outcome: Any) -> None:
    """One line per change the reply's control lines made (and per refused line), on stderr so
    the reply itself stays clean; a reply cut off at the token limit says so first."""
    from mindledger.cli.turn_lines import effect_lines, effects_of

    for line in effect_lines(effects_of(outcome)):
        echo(line, err=True)


def check_mock_flags(spec: str | None, mock_reply: str | None) -> None:
    """The floor's mock rule in this command's words (its flags), before anything is read."""
    from mindledger.domain.errors import InvalidInputError

    if spec == "mock" and mock_reply is None:
        raise InvalidInputError("--model mock needs --mock-reply TEXT (or @FILE)")
    if mock_reply is not None and spec not in (None, "mock"):
        raise InvalidInputError("--mock-reply works only with --model mock")


def model_options(fn: Any) -> Any:
    """--model, --mock-reply, --api-base, --budget."""
    for option in reversed(
        [
            click.option(
                "--model",
                "spec",
                metavar="SPEC",
                help="A LiteLLM model string (openai/gpt-4o-mini, ollama/llama3.2, ...), "
                "`local/smollm2-135m-instruct`, or `mock`. Default: the mind's model.",
            ),
            click.option(
                "--mock-reply",
                metavar="TEXT|@FILE",
                help="With --model mock: the scripted reply (no model is called).",
            ),
            click.option(
                "--api-base", metavar="URL", help="An OpenAI-compatible server's base URL."
            ),
            click.option(
                "--budget",
                default=DEFAULT_BUDGET,
                show_default=True,
                type=click.IntRange(TURN_BUDGET_FLOOR),
                help="Token budget for the memory put in front of the model.",
            ),
        ]
    ):
        fn = option(fn)
    return fn


@click.command()
@click.argument("text")
@model_options
@turn_chat_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--no-server", is_flag=True, expose_value=False, help=NO_SERVER_HELP)
@click.pass_obj
def turn(
    home: Home,
    text: str,
    spec: str | None,
    mock_reply: str | None,
    api_base: str | None,
    budget: int,
    system: str | None,
    stop: tuple[str, ...],
    temperature: float | None,
    top_p: float | None,
    max_tokens: int | None,
    seed: int | None,
    as_json: bool,
) -> None:
    """Say TEXT to the mind (`-` reads it from stdin) and print its reply.

    The message is recorded first; then context is assembled from the read models, the model
    is called, and the reply and everything it commits to, claims or defines are recorded
    together. A reply cut off at the token limit is kept and marked cut off (a control line
    it stops in the middle of does not apply). Exit 1 if the model fails (the message stays in
    the ledger). --system and the sampling options apply to this turn only and are recorded
    with it (`mind log --turn last --json`); a value out of range is refused, nothing recorded.

    Example:

        mind turn "What did I promise to do this week?"

        mind turn "hi" --model mock --mock-reply $'Hello!\\nCOMMIT: say hello daily' --json

        mind turn "Plan my week" --system "Answer in three bullets." --temperature 0.2 --stop END
    """
    if text == "-":
        text = stdin_text()
    check_mock_flags(spec, mock_reply)
    mind = opened(home)
    mind.settle_between_turns = False  # one turn, then the process ends
    done = mind.run_turn(
        text,
        model=spec,
        mock_reply=reply_text(mock_reply),
        api_base=api_base,
        budget=budget,
        system=system,
        sampling=chosen_sampling(temperature, top_p, max_tokens, seed, stop),
    )
    code = echo_turn(done.data, as_json)
    if code:
        raise SystemExit(code)


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    from mindledger.cli.chat import chat

    group.add_command(turn)
    group.add_command(chat)
