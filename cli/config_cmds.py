"""`mind config`: per-mind settings, recorded as events (so a change replays like any other)."""

from __future__ import annotations

from pathlib import Path

import click

from cli.compose import Home, open_mind
from cli.output import echo, emit_json
from domain.settings import (
    EMBEDDING_API_BASE,
    EMBEDDING_MODEL,
    KEYS,
    SETTINGS,
    WORKSPACE,
    defaults,
)

MEANINGS = {
    WORKSPACE: "folder whose files count as evidence of work on threads",
    EMBEDDING_MODEL: "LiteLLM embedding model for recall's vector channel, or off",
    EMBEDDING_API_BASE: "base URL of an OpenAI-compatible embedding server, or off",
}


@click.group()
def config() -> None:
    """Show and change this mind's settings (the tension law, the gate, the workspace).

    Example:

        mind config set threads.floor_interval 12
    """


@config.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show(home: Home, as_json: bool) -> None:
    """Every setting with its value and whether it is the default.

    Example:

        mind config show --json
    """
    current = open_mind(home).identity().config
    rows = [
        {
            "key": key,
            "value": current.get(key, value),
            "default": key not in current,
            "meaning": SETTINGS[key][2] if key in SETTINGS else MEANINGS[key],
        }
        for key, value in defaults().items()
    ]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        mark = "" if row["default"] else "  (set)"
        echo(f"{row['key']:<26} {row['value']}{mark}")


@config.command(name="set")
@click.argument("key", type=click.Choice(KEYS))
@click.argument("value")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def set_(home: Home, key: str, value: str, as_json: bool) -> None:
    """Set KEY to VALUE (recorded as an event; the old value stays in the history).

    Example:

        mind config set threads.cycle_threshold 3.5

        mind config set workspace ~/notes
    """
    if key == WORKSPACE:
        folder = Path(value).expanduser().resolve()
        if folder.exists() and not folder.is_dir():
            from domain.errors import InvalidInputError

            raise InvalidInputError(f"{folder} is a file; the workspace must be a directory")
        value = str(folder)
    changed = open_mind(home).configure(key, value)
    if as_json:
        emit_json({"key": key, "value": value, "changed": changed})
        return
    echo(f"{key} = {value}" if changed else f"{key} is already {value}")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(config)
