"""`mind config`: per-mind settings, recorded as events (so a change replays like any other)."""

from __future__ import annotations

import click

from mindledger.cli.arguments import RefusedValueError
from mindledger.cli.floor import opened
from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.settings import KEYS


@click.group()
def config() -> None:
    """Show every setting with its source; change this mind's (the tension law, the gate, the
    workspace).

    Example:

        mind config set threads.floor_interval 12
    """


@config.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show(home: Home, as_json: bool) -> None:
    """Every setting with its value, where the value came from, and what it means.

    Process settings come from a flag, else the environment (MIND_*), else MIND_HOME/.env,
    else config.json, else the default; this mind's settings come from its ledger (`config set`).
    Secrets are masked.

    Example:

        mind config show --json
    """
    from mindledger import config_show

    rows = config_show(home).model_dump(mode="json")
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        value = "(unset)" if row["value"] is None else row["value"]
        echo(f"{row['key']:<26} {value if value != '' else '(empty)'}  ({row['source']})")
        takes = f" (takes {row['accepts']})" if row["accepts"] else ""
        echo(f"    {row['meaning']}{takes}")


@config.command(name="set", context_settings={"ignore_unknown_options": True})
@click.argument("key", type=click.Choice(KEYS), metavar="KEY")
@click.argument("value")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def set_(home: Home, key: str, value: str, as_json: bool) -> None:
    """Set KEY to VALUE (recorded as an event; the old value stays in the history).

    Example:

        mind config set threads.cycle_threshold 3.5

        mind config set workspace ~/notes

    A number is refused unless finite and in its range (`mind config show` lists them); the
    workspace cannot be / or a system folder; a VALUE starting with - needs no `--`.
    """
    try:
        done = opened(home).configure(key, value)
    except InvalidInputError as e:  # a value typed here: refused as click refuses one (exit 2)
        raise RefusedValueError(str(e)) from None
    if as_json:
        emit_json(done.model_dump(mode="json"))
        return
    echo(f"{done.key} = {done.value}" if done.changed else f"{done.key} is already {done.value}")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(config)
