"""`mind import`: bring conversations from elsewhere into the ledger (no model calls)."""

from __future__ import annotations

from pathlib import Path

import click

from cli.compose import Home, open_mind
from cli.output import echo, emit_json

PATH = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.group(name="import")
def import_() -> None:
    """Import conversations as observed messages; re-importing adds nothing new.

    Example:

        mind import locomo ../shared/data/locomo/locomo10.json --sample conv-26
    """


@import_.command()
@click.argument("path", type=PATH)
@click.option("--sample", metavar="ID", help="Only this sample (e.g. conv-26).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def locomo(home: Home, path: Path, sample: str | None, as_json: bool) -> None:
    """Import the LoCoMo benchmark file: every turn with its speaker, session time and dia_id.

    Example:

        mind import locomo locomo10.json --sample conv-26
    """
    from adapters.importers import import_locomo

    done = import_locomo(open_mind(home), path, sample)
    if as_json:
        emit_json(done)
        return
    for d in done:
        echo(f"{d['sample']}: {d['added']} messages added, {d['skipped']} already there")


@import_.command()
@click.argument("path", type=PATH)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def chat(home: Home, path: Path, as_json: bool) -> None:
    """Import a JSONL transcript: one {"role", "content", "time"?} object per line.

    Example:

        mind import chat history.jsonl
    """
    from adapters.importers import import_chat

    done = import_chat(open_mind(home), path)
    if as_json:
        emit_json(done)
    else:
        echo(f"{done['source']}: {done['added']} messages added, {done['skipped']} already there")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(import_)
