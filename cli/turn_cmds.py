"""Turns: `mind turn` (one exchange) and `mind chat` (a REPL)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mindledger.cli.output import echo
from mindledger.cli.render import echo_turn
from mindledger.cli.server_client import NO_SERVER_HELP
from mindledger.compose import Home, asker, build_model, open_mind, open_reader, turn_session


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


def outcome_json(home: Home, outcome: Any) -> dict[str, Any]:
    """The documented JSON of a turn (`mind turn --json`, the HTTP API's turn)."""
    reader = open_reader(home)
    try:
        positions = reader.positions(outcome.notification_ids)
    finally:
        reader.close()
    mind = open_mind(home)
    try:
        name = mind.identity().name
    finally:
        mind.close()
    return {
        "turn": outcome.turn_id.hex,
        "seq": outcome.seq,
        "status": outcome.status,
        "reply": outcome.reply,
        "reply_raw": outcome.reply_raw,
        "opened": outcome.opened,
        "closed": outcome.closed,
        "claims": outcome.claims,
        "rejections": outcome.rejections,
        "identity": {"name": name, "changes": outcome.identity},
        "threads": outcome.threads,
        "context": outcome.context,
        "context_tokens": outcome.context_tokens,
        "model": outcome.model,
        "usage": outcome.usage,
        "latency_ms": outcome.latency_ms,
        "finish_reason": outcome.finish_reason,
        "cut_off": outcome.cut_off,
        "failure": outcome.failure,
        "events": {
            "first": positions[0] if positions else None,
            "last": positions[-1] if positions else None,
        },
    }


def echo_effects(outcome: Any) -> None:
    """One line per change the reply's control lines made (and per refused line), on stderr so
    the reply itself stays clean; a reply cut off at the token limit says so first."""
    from mindledger.cli.turn_lines import effect_lines, effects_of

    for line in effect_lines(effects_of(outcome)):
        echo(line, err=True)


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
                help="With --model mock: the scripted reply (through LiteLLM's mock).",
            ),
            click.option(
                "--api-base", metavar="URL", help="An OpenAI-compatible server's base URL."
            ),
            click.option(
                "--budget",
                default=2000,
                show_default=True,
                type=click.IntRange(200),
                help="Token budget for the memory put in front of the model.",
            ),
        ]
    ):
        fn = option(fn)
    return fn


def _model(home: Home, spec: str | None, mock_reply: str | None, api_base: str | None) -> Any:
    return turn_model(home, spec, reply_text(mock_reply), api_base)


def turn_model(home: Home, spec: str | None, mock_reply: str | None, api_base: str | None) -> Any:
    """The model a turn runs on: `spec`, else the mind's; `mock` needs a scripted reply (the
    text itself: reading `@FILE` is the command line's business)."""
    from mindledger.domain.errors import InvalidInputError

    if spec == "mock" and mock_reply is None:
        raise InvalidInputError("--model mock needs --mock-reply TEXT (or @FILE)")
    if mock_reply is not None and spec not in (None, "mock"):
        raise InvalidInputError("--mock-reply works only with --model mock")
    if spec is None:
        mind = open_mind(home)
        try:
            spec = mind.identity().model
        finally:
            mind.close()
    return build_model(home, spec, mock_reply, api_base)


@click.command()
@click.argument("text")
@model_options
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
    as_json: bool,
) -> None:
    """Say TEXT to the mind (`-` reads it from stdin) and print its reply.

    The message is recorded first; then context is assembled from the read models, the model
    is called, and the reply and everything it commits to, claims or defines are recorded
    together. A reply cut off at the token limit is kept and marked cut off (a control line
    it stops in the middle of does not apply). Exit 1 if the model fails (the message stays in
    the ledger).

    Example:

        mind turn "What did I promise to do this week?"

        mind turn "hi" --model mock --mock-reply $'Hello!\\nCOMMIT: say hello daily' --json
    """
    if text == "-":
        text = sys.stdin.read()
    model = _model(home, spec, mock_reply, api_base)
    with turn_session(home) as service:
        # A message asking what reusable knowledge answers is answered from it (recorded).
        outcome = asker(home, service, semantic=False).turn(text, lambda: model, budget=budget)
    code = echo_turn(outcome_json(home, outcome), as_json)
    if code:
        raise SystemExit(code)


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    from mindledger.cli.chat import chat

    group.add_command(turn)
    group.add_command(chat)
