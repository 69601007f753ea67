"""What every command shares: `--home` after the subcommand, verbatim help examples, `--as-of`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from mindledger.cli.arguments import GivenPath
from mindledger.cli.request_words import recording
from mindledger.compose import Home
from mindledger.rules import AsOf, UnreadableAsOfError, parse_as_of

F = TypeVar("F", bound=Callable[..., Any])

HOME_HELP = "The mind's folder (default: $MIND_HOME, else ~/.local/share/mindledger)."
NO_SERVER_HELP = (
    "Run in this process: neither use nor start the home's background server "
    "(MIND_NO_SERVER=1 does the same)."
)


def _set_home(ctx: click.Context, _: click.Parameter, value: Path | None) -> None:
    # The group's --home has already put a Home in ctx.obj; one given here, after the
    # subcommand, replaces it for this command and the commands below it.
    if value is not None:
        ctx.obj = Home(value)


def home_option() -> click.Option:
    """`--home DIR` for one command: the same option the `mind` group takes."""
    return click.Option(
        ["--home"],
        type=GivenPath(file_okay=False, path_type=Path),
        expose_value=False,
        callback=_set_home,
        help=HOME_HELP,
    )


def verbatim_examples(help_text: str) -> str:
    """The help text with every paragraph from `Example:` on marked `\\b`, so click prints the
    examples as written instead of rewrapping them (it broke a quoted string in two)."""
    head, marker, examples = inspect.cleandoc(help_text).partition("Example:")
    if not marker:
        return help_text
    paragraphs = [p for p in examples.split("\n\n") if p.strip()]
    return head + marker + "".join("\n\n\b\n" + p.strip("\n") for p in paragraphs)


def share_options(group: click.Group, below: list[click.Command] | None = None) -> None:
    """Give every command below `group` a `--home` and verbatim examples; with `below`, only
    the group itself (when `below` is empty) or those commands and theirs (added later)."""
    found = walk(group) if below is None else [c for b in below for c in walk(b)]
    if below == []:
        found = [group]
    for command in found:
        if command.callback is not None:  # errors name its flags (`cli.request_words`)
            command.callback = recording(command.callback)
        if command.help:
            command.help = verbatim_examples(command.help)
        has_home = any(p.name == "home" or "--home" in p.opts for p in command.params)
        if command is not group and not has_home:
            command.params.append(home_option())


def walk(command: click.Command) -> list[click.Command]:
    """`command` and every command below it, depth first."""
    found = [command]
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            found += walk(command.commands[name])
    return found


class AsOfType(click.ParamType[AsOf, Any]):
    """A ledger position (a whole number from 1) or an ISO-8601 time."""

    name = "POSITION|TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> AsOf:
        if isinstance(value, AsOf):
            return value
        try:
            return parse_as_of(str(value), "--as-of")
        except UnreadableAsOfError as e:
            self.fail(str(e), param, ctx)


AS_OF_HELP = (
    "The mind as it stood at a ledger position (e.g. 1200) or a time (ISO-8601, e.g. "
    "2026-05-01T09:00:00Z): only events up to it, evaluated at its time."
)


def as_of_option() -> Callable[[F], F]:
    """The `--as-of` option `recall` and `threads` share."""
    return click.option(
        "--as-of", "as_of", type=AsOfType(), metavar="POSITION|TIME", help=AS_OF_HELP
    )


# A turn's sampling settings as options: (flag, floor name, type, help). The floor checks each
# value's range and names the flag when it refuses one (`cli.request_words`).
SAMPLING_OPTIONS: tuple[tuple[str, str, click.ParamType[Any, Any], str], ...] = (
    (
        "--temperature",
        "temperature",
        click.FLOAT,
        "Randomness of the reply, 0 to 2; 0 is the most predictable (e.g. --temperature 0.2).",
    ),
    (
        "--top-p",
        "top_p",
        click.FLOAT,
        "Nucleus sampling, 0 to 1: the probability mass the reply is drawn from "
        "(e.g. --top-p 0.9).",
    ),
    (
        "--max-tokens",
        "max_tokens",
        click.INT,
        "The most tokens the reply may have; a longer one is cut off and marked so "
        "(e.g. --max-tokens 300).",
    ),
    (
        "--seed",
        "seed",
        click.INT,
        "A seed for repeatable sampling, where the model honours one (e.g. --seed 42).",
    ),
)


def turn_chat_options(fn: F) -> F:
    """`--system` and the sampling options of a turn (`chosen_sampling` collects them)."""
    stop = click.option(
        "--stop",
        metavar="TEXT",
        multiple=True,
        help="A sequence that ends the reply where it appears; repeat for up to 4 "
        "(e.g. --stop END --stop '###').",
    )
    fn = stop(fn)
    for flag, name, kind, text in reversed(SAMPLING_OPTIONS):
        fn = click.option(flag, name, type=kind, help=text)(fn)
    return click.option(
        "--system",
        metavar="TEXT",
        help="Your system prompt for this turn, sent after the mind's own (quoted: it cannot "
        "override it) and recorded with the turn (e.g. --system 'Answer in one sentence.').",
    )(fn)


def chosen_sampling(
    temperature: float | None,
    top_p: float | None,
    max_tokens: int | None,
    seed: int | None,
    stop: tuple[str, ...],
) -> dict[str, Any] | None:
    """The floor's `sampling` argument from the options given (None: none given)."""
    given = {
        "temperature": temperature,
        "top_p": top_p,
        "max_tokens": max_tokens,
        "seed": seed,
        "stop": list(stop) or None,
    }
    chosen = {k: v for k, v in given.items() if v is not None}
    return chosen or None
